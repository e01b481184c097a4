"""ASP.NET-style route templates as the Functions host reads them: `captures/{id}/events`."""

from __future__ import annotations

import re
from dataclasses import dataclass

# Inline constraints the host supports that an app here may plausibly use.
_CONSTRAINTS = {
    "int": r"-?\d+",
    "long": r"-?\d+",
    "guid": r"[0-9a-fA-F]{8}-?(?:[0-9a-fA-F]{4}-?){3}[0-9a-fA-F]{12}",
    "alpha": r"[A-Za-z]+",
    "bool": r"(?i:true|false)",
}
_PARAM = re.compile(r"^\{(\*)?([A-Za-z_][A-Za-z0-9_]*)(?::([a-z]+))?(\?)?\}$")


@dataclass(frozen=True)
class RouteTemplate:
    template: str
    pattern: re.Pattern[str]

    def match(self, path: str) -> dict[str, str] | None:
        m = self.pattern.fullmatch(path.strip("/"))
        if not m:
            return None
        return {k: v for k, v in m.groupdict().items() if v is not None}


def compile_route(template: str) -> RouteTemplate:
    """Compile a template; literal segments match case-insensitively, like ASP.NET routing."""
    parts = [p for p in template.strip("/").split("/") if p]
    regex = ""
    for i, part in enumerate(parts):
        m = _PARAM.match(part)
        if not m:
            if "{" in part or "}" in part:
                raise ValueError(f"route {template!r}: unsupported segment {part!r}")
            regex += ("/" if i else "") + f"(?i:{re.escape(part)})"
            continue
        catch_all, name, constraint, optional = m.groups()
        last = i == len(parts) - 1
        if (optional or catch_all) and not last:
            raise ValueError(f"route {template!r}: only the last segment may be optional")
        if constraint and constraint not in _CONSTRAINTS:
            raise ValueError(f"route {template!r}: unsupported constraint {constraint!r}")
        body = ".*" if catch_all else _CONSTRAINTS.get(constraint or "", r"[^/]+")
        group = f"(?P<{name}>{body})"
        sep = "/" if i else ""
        regex += f"(?:{sep}{group})?" if optional or catch_all else f"{sep}{group}"
    return RouteTemplate(template=template, pattern=re.compile(regex))
