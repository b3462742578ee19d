// A Node program writing FILES small files into one directory deep in a tree, as a package
// extractor or a build tool does: syslint lab stat-storm (README.md).
//   node mkdir.js each ROOT FILES   fs.mkdirSync(dir, {recursive: true}) before every file (BAD:
//                                   mkdir of a directory that exists, EEXIST, then a statx, per file)
//   node mkdir.js once ROOT FILES   the directory made once, then the files (GOOD)
const fs = require('fs');
const path = require('path');
const [mode, root, n] = [process.argv[2], process.argv[3], +process.argv[4]];
const dir = path.join(root, 'node_modules', '@scope', 'pkg', 'lib', 'util');
if (mode === 'once') fs.mkdirSync(dir, { recursive: true });
for (let i = 0; i < n; i++) {
  if (mode === 'each') fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, `f${i}.js`), `module.exports = ${i};\n`);
}
