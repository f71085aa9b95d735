/**
 * Preloaded into a bench's server (`--require`): on SIGUSR2 it writes the
 * longest event-loop delay since the last SIGUSR2 to stderr, as
 * `loop-delay-max-ms N`, and starts over. The delay is measured in the
 * server itself, so unlike a client's round trip it does not include the
 * time the client's own process waited for a CPU.
 */
const { monitorEventLoopDelay } = require("node:perf_hooks");

const delay = monitorEventLoopDelay({ resolution: 5 });
delay.enable();
process.on("SIGUSR2", () => {
  process.stderr.write(`loop-delay-max-ms ${(delay.max / 1e6).toFixed(0)}\n`);
  delay.reset();
});
