/**
 * `@car/ir` is what users of the IR need; the kernels other CAR packages
 * share sit behind `@car/ir/internal`. These tests hold the two apart, so a
 * kernel does not drift back into the public face (or leave the internal
 * one) unnoticed.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import * as publicFace from "../src/index.ts";
import * as internal from "../src/internal.ts";

const manifest = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as {
  exports: Record<string, { source?: string } | string>;
};

describe("@car/ir public face", () => {
  it("exports no kernel that @car/ir/internal holds", () => {
    const kernels = Object.keys(internal);
    expect(kernels.length).toBeGreaterThan(0);
    expect(kernels.filter((name) => name in publicFace)).toEqual([]);
  });

  it("keeps the kernels the runtime packages import on the internal face", () => {
    for (const name of ["Int32List", "successorRows", "levelsOf", "pushWrittenKeys", "stateDependencyKeys", "checkPrecondition", "undoGap"]) {
      expect(name in internal, name).toBe(true);
      expect(name in publicFace, name).toBe(false);
    }
  });

  it("keeps what a user of the IR needs on the public face", () => {
    for (const name of [
      "parseProposal",
      "parseProposalWithGraph",
      "schemas",
      "proposalInputSchema",
      "CarError",
      "dependencyEdges",
      "buildDag",
      "evaluatePrecondition",
      "resolveOutputRefs",
      "canonicalJson",
      "paramsDigest",
      "stringifyProposal",
      "toolCall",
    ]) {
      expect(name in publicFace, name).toBe(true);
    }
  });

  it("publishes ./internal through the exports map, source condition first", () => {
    const entry = manifest.exports["./internal"];
    expect(entry).toEqual({ source: "./src/internal.ts", types: "./dist/internal.d.mts", default: "./dist/internal.mjs" });
    expect(Object.keys(entry as object)[0]).toBe("source");
  });
});
