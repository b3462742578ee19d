// append: a request handler logging one line per request to a file.
//
//   node append.js each|once LOG REQUESTS
//
// each: fs.appendFileSync(LOG, line) per request: open, write, close every time
// once: the file opened once in append mode, fs.writeSync(fd, line) per request
'use strict';
const fs = require('fs');
const [mode, log, n] = [process.argv[2], process.argv[3], Number(process.argv[4])];
if (!['each', 'once'].includes(mode) || !log || !(n > 0)) {
  console.error('usage: node append.js each|once LOG REQUESTS');
  process.exit(2);
}
const fd = mode === 'once' ? fs.openSync(log, 'a') : -1;
for (let i = 0; i < n; i++) {
  const line = `${new Date(1700000000000 + i).toISOString()} GET /item/${i} 200\n`;
  if (mode === 'each') fs.appendFileSync(log, line);
  else fs.writeSync(fd, line);
}
if (fd >= 0) fs.closeSync(fd);
