import { fileURLToPath } from "node:url";

/** The package directory (where the binary is built), from `src/` or `dist/` alike. */
export const PACKAGE_DIR = fileURLToPath(new URL("..", import.meta.url));
