/**
 * A POSIX-shell reader, just deep enough to know which words a shell would
 * run as programs. Substring matching cannot tell `nc host 4444` from
 * `rsync`, `grep nc`, or a commit message that mentions nc; the shell's own
 * grammar can. It handles quoting and escapes, `;` `&` `&&` `||` `|` and
 * newlines, `( )` groups, redirections, command substitution (`$( )`,
 * backticks, `<( )`), and here-documents. It never throws: malformed input
 * (an unclosed quote) reads to the end of the text, as a shell would complain
 * rather than run something else.
 */

/** One shell word after quote removal. Substitutions stay in `text` as written and are parsed into `substitutions`. */
export interface Word {
  text: string;
  substitutions: Script[];
  /**
   * Set when the word's value is decided only when the shell runs it — a
   * parameter expansion, a substitution, an unquoted glob or brace
   * expansion, an undecodable ANSI-C escape — naming the first such part.
   */
  opaque?: string;
}

export interface Redirect {
  /** The operator without its file descriptor: `>`, `>>`, `<`, `<<`, `<<-`, `<<<`, `>&`, `&>`, … */
  op: string;
  target: Word;
  /** For `<<` and `<<-`: the here-document body. */
  heredoc?: string;
  /** For `<<` and `<<-`: whether the delimiter was quoted, so the shell expands nothing in the body. */
  quoted?: boolean;
}

export interface SimpleCommand {
  kind: "simple";
  words: Word[];
  redirects: Redirect[];
}

export interface Group {
  kind: "group";
  body: Script;
  redirects: Redirect[];
}

export type Stage = SimpleCommand | Group;

/** Stages joined by `|`. A lone command is a one-stage pipeline. */
export interface Pipeline {
  stages: Stage[];
}

export interface Script {
  pipelines: Pipeline[];
  /** Set when substitutions nest deeper than the reader follows; the text is then not fully inspected. */
  truncated: boolean;
  /** Set when the text ends inside a construct (a quote, a substitution, a here-document), naming the first: a shell would refuse it, and the reader has guessed. */
  incomplete?: string;
}

/** Nesting beyond this is not read (it is flagged as `truncated` instead), so hostile input cannot exhaust the stack. */
const MAX_DEPTH = 48;

export function parseShell(source: string): Script {
  return new Reader(source, 0).script(false);
}

interface PendingHeredoc {
  delimiter: string;
  stripTabs: boolean;
  redirect: Redirect;
}

const BLANK = new Set([" ", "\t"]);
const WORD_END = new Set([" ", "\t", "\n", ";", "&", "|", "<", ">", "(", ")"]);

class Reader {
  pos = 0;
  truncated = false;
  incomplete: string | undefined;
  pending: PendingHeredoc[] = [];

  constructor(
    readonly src: string,
    readonly depth: number,
  ) {}

  /** Reads pipelines until the end of input, or until the `)` closing a substitution or group when `nested`. */
  script(nested: boolean): Script {
    const pipelines: Pipeline[] = [];
    let stages: Stage[] = [];
    let current: SimpleCommand | undefined;
    let group: Group | undefined;
    const endStage = () => {
      group = undefined;
      if (current && (current.words.length > 0 || current.redirects.length > 0)) stages.push(current);
      current = undefined;
    };
    const endPipeline = () => {
      endStage();
      if (stages.length > 0) pipelines.push({ stages });
      stages = [];
    };
    const src = this.src;
    let closed = false;
    while (this.pos < src.length) {
      const c = src[this.pos] as string;
      const next = src[this.pos + 1];
      if (BLANK.has(c)) {
        this.pos++;
      } else if (c === "\\" && next === "\n") {
        this.pos += 2;
      } else if (c === "#" && !current?.words.length) {
        while (this.pos < src.length && src[this.pos] !== "\n") this.pos++;
      } else if (c === "\n") {
        this.pos++;
        this.readHeredocs();
        endPipeline();
      } else if (c === ")") {
        this.pos++;
        if (nested) {
          closed = true;
          break;
        }
        endPipeline();
      } else if (c === ";" || (c === "&" && next !== ">")) {
        this.pos += c === "&" && next === "&" ? 2 : next === ";" && c === ";" ? 2 : 1;
        endPipeline();
      } else if (c === "|") {
        if (next === "|") {
          this.pos += 2;
          endPipeline();
        } else {
          this.pos += next === "&" ? 2 : 1;
          endStage();
        }
      } else if (c === "(" && !current?.words.length) {
        this.pos++;
        endStage();
        group = { kind: "group", body: this.inner((r) => r.script(true)), redirects: [] };
        stages.push(group);
      } else if (this.atRedirect()) {
        // Redirections right after `)` belong to the group.
        const into = current ?? group ?? (current = { kind: "simple", words: [], redirects: [] });
        into.redirects.push(this.redirect());
      } else {
        group = undefined;
        current ??= { kind: "simple", words: [], redirects: [] };
        current.words.push(this.word());
      }
    }
    if (nested && !closed) this.unclosed("an unclosed parenthesis or substitution");
    if (this.pending.length > 0) this.unclosed("a here-document without its terminator");
    endPipeline();
    return this.incomplete === undefined ? { pipelines, truncated: this.truncated } : { pipelines, truncated: this.truncated, incomplete: this.incomplete };
  }

  skipBalanced(): void {
    let open = 1;
    while (this.pos < this.src.length && open > 0) {
      const c = this.src[this.pos++];
      if (c === "(") open++;
      else if (c === ")") open--;
    }
  }

  atRedirect(): boolean {
    const rest = this.src.slice(this.pos, this.pos + 12);
    if (/^[<>]\(/.test(rest)) return false; // process substitution is a word
    return /^(\d*[<>]|&>)/.test(rest);
  }

  redirect(): Redirect {
    const m = /^\d*(<<<|<<-|<<|<>|<&|>>|>&|>\||&>>|&>|<|>)/.exec(this.src.slice(this.pos, this.pos + 16)) as RegExpExecArray;
    this.pos += m[0].length;
    const op = m[1] as string;
    while (BLANK.has(this.src[this.pos] as string)) this.pos++;
    const from = this.pos;
    const target = this.word();
    const redirect: Redirect = { op, target };
    if (op === "<<" || op === "<<-") {
      redirect.quoted = /['"\\]/.test(this.src.slice(from, this.pos));
      this.pending.push({ delimiter: target.text, stripTabs: op === "<<-", redirect });
    }
    return redirect;
  }

  /** After a newline: the bodies of every here-document opened on the line just ended. */
  readHeredocs(): void {
    const src = this.src;
    for (const doc of this.pending) {
      const lines: string[] = [];
      let found = false;
      while (this.pos < src.length) {
        let end = src.indexOf("\n", this.pos);
        if (end === -1) end = src.length;
        const raw = src.slice(this.pos, end);
        this.pos = Math.min(end + 1, src.length);
        const line = doc.stripTabs ? raw.replace(/^\t+/, "") : raw;
        if (line === doc.delimiter) {
          found = true;
          break;
        }
        lines.push(line);
      }
      if (!found) this.unclosed("a here-document without its terminator");
      doc.redirect.heredoc = lines.join("\n");
    }
    this.pending = [];
  }

  word(): Word {
    const src = this.src;
    const word: Word = { text: "", substitutions: [] };
    const start = this.pos;
    let braceOpen = false;
    let braceList = false;
    while (this.pos < src.length) {
      const c = src[this.pos] as string;
      const next = src[this.pos + 1];
      if ((c === "<" || c === ">") && next === "(" && this.pos === start) {
        this.pos += 2;
        this.substitution(word, start, () => this.inner((r) => r.script(true)));
        markOpaque(word, "a process substitution");
        continue;
      }
      if (WORD_END.has(c)) break;
      if (c === "\\") {
        if (next === "\n") this.pos += 2;
        else {
          word.text += next ?? "";
          this.pos += 2;
        }
      } else if (c === "'") {
        const end = src.indexOf("'", this.pos + 1);
        if (end === -1) this.unclosed("an unclosed single quote");
        const stop = end === -1 ? src.length : end;
        word.text += src.slice(this.pos + 1, stop);
        this.pos = stop + 1;
      } else if (c === '"') {
        this.pos++;
        this.doubleQuoted(word);
      } else if (takeRun(this, word, PLAIN_RUN)) {
        // A run of ordinary characters is appended in one piece: reading stays linear without a string per character.
      } else {
        if (c === "*" || c === "?" || c === "[") markOpaque(word, "a glob");
        else if (c === "{") braceOpen = true;
        else if (braceOpen && (c === "," || (c === "." && next === "."))) braceList = true;
        else if (c === "}" && braceList) markOpaque(word, "a brace expansion");
        this.expansionOrChar(word, c);
      }
    }
    // A metacharacter the grammar has no place for here (`echo (`): take it as text so reading always advances.
    if (this.pos === start && this.pos < src.length) word.text += src[this.pos++];
    return word;
  }

  doubleQuoted(word: Word): void {
    const src = this.src;
    while (this.pos < src.length) {
      const c = src[this.pos] as string;
      if (takeRun(this, word, QUOTED_RUN)) continue;
      if (c === '"') {
        this.pos++;
        return;
      }
      if (c === "\\") {
        const next = src[this.pos + 1];
        if (next === "\n") {
          this.pos += 2;
        } else if (next === "$" || next === "`" || next === '"' || next === "\\") {
          word.text += next;
          this.pos += 2;
        } else {
          word.text += c;
          this.pos++;
        }
      } else this.expansionOrChar(word, c);
    }
    this.unclosed("an unclosed double quote");
  }

  /** Outside single quotes `$…` and backticks expand; any other character is itself. */
  expansionOrChar(word: Word, c: string): void {
    if (c === "$") this.dollar(word);
    else if (c === "`") this.backtick(word);
    else {
      word.text += c;
      this.pos++;
    }
  }

  dollar(word: Word): void {
    const src = this.src;
    const start = this.pos;
    const next = src[this.pos + 1];
    if (next === "(" && src[this.pos + 2] === "(") {
      // Arithmetic expansion: text, nothing runs (a substitution inside it is still read).
      this.pos += 3;
      this.skipBalanced();
      if (src[this.pos] === ")") this.pos++;
      word.text += src.slice(start, this.pos);
      markOpaque(word, "an arithmetic expansion");
    } else if (next === "(") {
      this.pos += 2;
      this.substitution(word, start, () => this.inner((r) => r.script(true)));
      markOpaque(word, "a command substitution");
    } else if (next === "{") {
      const end = src.indexOf("}", this.pos + 2);
      if (end === -1) this.unclosed("an unclosed parameter expansion");
      this.pos = end === -1 ? src.length : end + 1;
      word.text += src.slice(start, this.pos);
      markOpaque(word, "a parameter expansion");
    } else if (next === "'") {
      const { text, end, undecodable } = decodeAnsiC(src, this.pos + 2);
      this.pos = end;
      word.text += text;
      if (undecodable) markOpaque(word, "an ANSI-C escape it cannot decode");
      if (end > src.length) this.unclosed("an unclosed ANSI-C quote");
    } else if (next === '"') {
      // `$"…"` is a locale-translated double-quoted string.
      this.pos += 2;
      this.doubleQuoted(word);
    } else if (next !== undefined && /[A-Za-z0-9_@*#?$!-]/.test(next)) {
      const name = /^[A-Za-z_][A-Za-z0-9_]*/.exec(src.slice(this.pos + 1, this.pos + 257));
      this.pos += 1 + (name ? name[0].length : 1);
      word.text += src.slice(start, this.pos);
      markOpaque(word, "a parameter expansion");
    } else {
      word.text += "$";
      this.pos++;
    }
  }

  backtick(word: Word): void {
    const src = this.src;
    const start = this.pos;
    let i = this.pos + 1;
    let inner = "";
    while (i < src.length && src[i] !== "`") {
      if (src[i] === "\\" && (src[i + 1] === "`" || src[i + 1] === "\\" || src[i + 1] === "$")) {
        inner += src[i + 1];
        i += 2;
      } else inner += src[i++];
    }
    if (i >= src.length) this.unclosed("an unclosed backquote");
    this.pos = Math.min(i + 1, src.length);
    word.text += src.slice(start, this.pos);
    markOpaque(word, "a command substitution");
    if (this.depth + 1 > MAX_DEPTH) {
      this.truncated = true;
      return;
    }
    const script = new Reader(inner, this.depth + 1).script(false);
    if (script.truncated) this.truncated = true;
    if (script.incomplete !== undefined) this.unclosed(script.incomplete);
    word.substitutions.push(script);
  }

  substitution(word: Word, start: number, read: () => Script): void {
    const script = read();
    word.substitutions.push(script);
    word.text += this.src.slice(start, this.pos);
  }

  /** Reads a nested script in a child reader over the same text, then continues after it. */
  inner(read: (r: Reader) => Script): Script {
    if (this.depth + 1 > MAX_DEPTH) {
      this.truncated = true;
      this.skipBalanced();
      return { pipelines: [], truncated: true };
    }
    const child = new Reader(this.src, this.depth + 1);
    child.pos = this.pos;
    const script = read(child);
    this.pos = child.pos;
    if (script.truncated) this.truncated = true;
    if (script.incomplete !== undefined) this.unclosed(script.incomplete);
    return script;
  }

  unclosed(what: string): void {
    this.incomplete ??= what;
  }
}

/** Characters with no meaning to the reader outside quotes, and inside double quotes. */
const PLAIN_RUN = /[^\s;&|<>()\\'"$`*?[{},.]+/y;
const QUOTED_RUN = /[^"\\$`]+/y;

/** Appends the run of `run` characters at the reader's position to `word`; whether there was one. */
function takeRun(reader: { src: string; pos: number }, word: Word, run: RegExp): boolean {
  run.lastIndex = reader.pos;
  const m = run.exec(reader.src);
  if (m === null) return false;
  word.text += m[0];
  reader.pos += m[0].length;
  return true;
}

function markOpaque(word: Word, what: string): void {
  word.opaque ??= what;
}

const SIMPLE_ESCAPES: Record<string, string> = { a: "\x07", b: "\b", e: "\x1b", E: "\x1b", f: "\f", n: "\n", r: "\r", t: "\t", v: "\v" };

/**
 * The body of `$'…'` from `from` (just after the opening quote): bash's
 * escapes decoded — `\n` and friends, `\xHH`, `\NNN` octal, `\uHHHH`,
 * `\UHHHHHHHH` — so `$'\x6e\x63'` reads as `nc`. `\c` (a control character)
 * is not decoded and marks the word undecodable.
 */
export function decodeAnsiC(src: string, from: number): { text: string; end: number; undecodable: boolean } {
  let i = from;
  let text = "";
  let undecodable = false;
  while (i < src.length && src[i] !== "'") {
    if (src[i] !== "\\" || i + 1 >= src.length) {
      text += src[i++];
      continue;
    }
    const e = src[i + 1] as string;
    const simple = SIMPLE_ESCAPES[e];
    let m: RegExpExecArray | null;
    if (simple !== undefined) {
      text += simple;
      i += 2;
    } else if (e === "x" && (m = /^[0-9a-fA-F]{1,2}/.exec(src.slice(i + 2, i + 4)))) {
      text += String.fromCharCode(Number.parseInt(m[0], 16));
      i += 2 + m[0].length;
    } else if ((e === "u" || e === "U") && (m = new RegExp(`^[0-9a-fA-F]{1,${e === "u" ? 4 : 8}}`).exec(src.slice(i + 2, i + 10)))) {
      const code = Number.parseInt(m[0], 16);
      text += code <= 0x10ffff ? String.fromCodePoint(code) : "";
      i += 2 + m[0].length;
    } else if ((m = /^[0-7]{1,3}/.exec(src.slice(i + 1, i + 4)))) {
      text += String.fromCharCode(Number.parseInt(m[0], 8) & 255);
      i += 1 + m[0].length;
    } else if (e === "c") {
      undecodable = true;
      text += src.slice(i, i + 3);
      i += 3;
    } else {
      text += e;
      i += 2;
    }
  }
  return { text, end: Math.min(i + 1, src.length + 1), undecodable };
}
