/**
 * Words for a POSIX shell: each one in single quotes (an embedded `'` as
 * `'\''`), so the shell hands the program exactly these bytes and expands
 * nothing. Used to put a command inside another (`car sandbox-exec -c …`).
 */
export function shellQuote(words: readonly string[]): string {
  return words.map(quoteWord).join(" ");
}

function quoteWord(word: string): string {
  return `'${word.replaceAll("'", `'\\''`)}'`;
}
