// Preloaded (`node --import`) into each timed process by verify-scale.ts: prints its own CPU time and peak RSS on exit.
process.on("exit", () => {
  const r = process.resourceUsage();
  process.stderr.write(`RUSAGE ${JSON.stringify({ cpu: (r.userCPUTime + r.systemCPUTime) / 1000, maxRssKb: r.maxRSS })}\n`);
});
