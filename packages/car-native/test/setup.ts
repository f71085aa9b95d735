import { setupNative } from "../src/testing.ts";

export default setupNative;
