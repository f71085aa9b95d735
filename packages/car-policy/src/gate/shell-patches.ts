/**
 * Literal patches passed to `apply_patch`/`applypatch` inside a shell command
 * — through `bash -c` wrappers and here-documents — read with the egress
 * guard's shell reader. Scripts read from files and commands assembled at run
 * time are not decoded.
 */
import { patches } from "../inspectors/egress/command-position.ts";

export function shellPatches(command: string): string[] {
  return patches(command);
}
