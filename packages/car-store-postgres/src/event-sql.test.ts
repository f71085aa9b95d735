import pg from "pg";
import { describe, expect, it } from "vitest";
import { sqlLiteral } from "./event-sql.ts";

describe("sqlLiteral", () => {
  it("writes exactly what pg.escapeLiteral writes", () => {
    const cases = ["", "plain", '{"data":{},"kind":"action_started"}', "it's", "back\\slash", "both ' and \\", "''", "\\", "é ☃ 𝄞", "new\nline"];
    for (const value of cases) expect(sqlLiteral(value)).toBe(pg.escapeLiteral(value));
  });

  it("quotes a string with nothing to escape without copying it through the escaper", () => {
    expect(sqlLiteral('{"a":"b"}')).toBe(`'{"a":"b"}'`);
    expect(sqlLiteral("a'b")).toBe("'a''b'");
    expect(sqlLiteral("a\\b")).toBe(" E'a\\\\b'");
  });
});
