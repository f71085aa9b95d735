/** A policy file that could not be loaded. Always names the file: the operator has to know which one to fix. */
import { CarError } from "@car/ir";

export class PolicyLoadError extends CarError {
  override readonly name = "PolicyLoadError";
  readonly file: string;

  constructor(file: string, problem: string, options?: { cause?: unknown }) {
    super("policy_load_failed", `policy file ${file}: ${problem}`, { file }, options);
    this.file = file;
  }
}
