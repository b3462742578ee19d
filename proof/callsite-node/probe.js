// A module loader's probe loop, the failed-lookup-storm pattern in JavaScript: stat a path in
// directories that do not hold it, again and again. Traced with `node --perf-basic-prof`,
// syslint names probeMissing (this file, line 8) as the call site of the failed lookups
// (crates/cli/tests/call_sites.rs).
const fs = require('fs');
const n = Number(process.argv[2] || 30000);

function probeMissing(n) {
  let miss = 0;
  for (let i = 0; i < n; i++) {
    try { fs.statSync('/nonexistent/dir' + (i % 7) + '/mod.js'); } catch (e) { miss++; }
  }
  return miss;
}

console.log(probeMissing(n));
