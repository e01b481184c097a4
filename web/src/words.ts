// How the app says things: a confidence in words, and whether a title only repeats the text.

/** A classifier's confidence as a person would say it; the API asks below 0.6. */
export function sureness(confidence: number): string {
  if (confidence < 0.45) return "a guess";
  if (confidence < 0.6) return "not sure";
  if (confidence < 0.75) return "fairly sure";
  if (confidence < 0.9) return "sure";
  return "very sure";
}

/** A question's "(0.45)" in words: "Filed under Projects for now (not sure)."; left out when
 * the question says it already ("I'm not sure where this belongs — …"). */
export function inWords(message: string): string {
  return message.replace(/ ?\((0(?:\.\d+)?|1(?:\.0+)?)\)/, (_, n: string) => {
    const words = sureness(Number(n));
    return message.toLowerCase().includes(words) ? "" : ` (${words})`;
  });
}

const bare = (s: string) => s.toLowerCase().replace(/…$/, "").replace(/[^\p{L}\p{N}]+/gu, " ").trim();

/** A title that is the text, or its first words cut, says nothing the card does not. */
export function repeats(title: string, text: string): boolean {
  const t = bare(title);
  return t === "" || bare(text).startsWith(t);
}

/** How many characters the API counts in `text`: code points after trimming, so an emoji is one. */
export function characters(text: string): number {
  let n = 0;
  for (const _ of text.trim()) n++;
  return n;
}
