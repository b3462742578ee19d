<?php
// include: a PHP "application" serving REQUESTS requests; each request loads ten library
// files. Run from a copy next to its lib/ directory:
//
//   php include.php bad|short|good REQUESTS
//
//   bad:   include_path lists 30 vendor directories (none exists) before lib/, and the
//          files are included by bare name, so every include searches the whole path
//   short: include_path is just lib/: the same bare-name includes hit on the first try
//   good:  files are included by absolute path (__DIR__), nothing is searched
$mode = $argv[1] ?? '';
$requests = (int)($argv[2] ?? 100);
$lib = __DIR__ . '/lib';
if ($mode === 'bad') {
    $dirs = [];
    for ($i = 0; $i < 30; $i++) {
        $dirs[] = __DIR__ . "/vendor/pkg$i/src";
    }
    $dirs[] = $lib;
    set_include_path(implode(PATH_SEPARATOR, $dirs));
} elseif ($mode === 'short') {
    set_include_path($lib);
} elseif ($mode !== 'good') {
    fwrite(STDERR, "usage: php include.php bad|short|good REQUESTS\n");
    exit(2);
}
$sum = 0;
for ($r = 0; $r < $requests; $r++) {
    for ($i = 0; $i < 10; $i++) {
        if ($mode === 'good') {
            $sum += include __DIR__ . "/lib/part$i.php";
        } else {
            $sum += include "part$i.php";
        }
    }
}
// each request adds 0+1+...+9 = 45
exit($sum === 45 * $requests ? 0 : 1);
