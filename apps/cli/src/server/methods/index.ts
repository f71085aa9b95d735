/** The complete method table: one fragment per namespace, merged once. */
import type { MethodTable } from "../method.ts";
import { handshakeMethods } from "./handshake.ts";

export const METHODS: MethodTable = Object.freeze({
  ...handshakeMethods,
});
