// `npm run build:web`: web/src + web/static → web/dist, the whole app as a static site.
// app.js and sw.js are bundled and minified by esbuild; styles.css is minified; the rest is
// copied. The service worker gets the list of shell files and a hash of their contents, so
// every build that changes a byte of the shell replaces the cached one.
import { build } from "esbuild";
import { createHash } from "node:crypto";
import { cpSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";

const web = dirname(fileURLToPath(import.meta.url));
const dist = join(web, "dist");
const browsers = ["chrome100", "safari15", "firefox100", "edge100"];

// See src/no-proto.ts: the API speaks SSE, so the protobuf codec stays out of the bundle.
const sseOnly = {
  name: "sse-only",
  setup(builder) {
    builder.onResolve({ filter: /^@ag-ui\/proto$/ }, () => ({ path: join(web, "src", "no-proto.ts") }));
  },
};

function files(dir) {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? files(path) : [path];
  });
}

rmSync(dist, { recursive: true, force: true });
mkdirSync(dist, { recursive: true });
cpSync(join(web, "static"), dist, { recursive: true });

await build({
  entryPoints: [join(web, "src", "main.ts")],
  outfile: join(dist, "app.js"),
  bundle: true,
  minify: true,
  format: "esm",
  target: browsers,
  plugins: [sseOnly],
  legalComments: "eof",
  logLevel: "warning",
});
await build({
  entryPoints: [join(web, "static", "styles.css")],
  outfile: join(dist, "styles.css"),
  minify: true,
  target: browsers,
  allowOverwrite: true,
  logLevel: "warning",
});

const shell = files(dist).map((path) => relative(dist, path).split("\\").join("/")).sort();
const hash = createHash("sha256");
for (const path of shell) hash.update(path).update(readFileSync(join(dist, path)));
await build({
  entryPoints: [join(web, "src", "sw.ts")],
  outfile: join(dist, "sw.js"),
  bundle: true,
  minify: true,
  format: "iife",
  target: browsers,
  define: {
    SHELL: JSON.stringify(["./", ...shell]),
    VERSION: JSON.stringify(hash.digest("hex").slice(0, 12)),
  },
  logLevel: "warning",
});

for (const path of [...shell, "sw.js"].sort()) {
  console.log(`web/dist/${path}  ${statSync(join(dist, path)).size} B`);
}
