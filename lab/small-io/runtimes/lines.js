// lines.js: writes N log lines to a file with fs.writeSync per line (one write(2) each) or
// through fs.createWriteStream (lines written while a write is in flight are gathered into one
// writev(2)).
// usage: node lines.js MODE N OUT   (MODE: writesync | stream)
'use strict';
const fs = require('fs');
const [mode, nArg, out] = process.argv.slice(2);
const n = Number(nArg);
const line = (i) => `2026-11-27T17:00:00Z INFO request ${i} served in 3 ms status=200\n`;
if (mode === 'writesync') {
  const fd = fs.openSync(out, 'w');
  for (let i = 0; i < n; i++) fs.writeSync(fd, line(i));
  fs.closeSync(fd);
} else if (mode === 'stream') {
  const s = fs.createWriteStream(out);
  for (let i = 0; i < n; i++) s.write(line(i));
  s.end();
} else {
  throw new Error('mode: writesync | stream');
}
