<?php
// app: a PHP "application" serving REQUESTS requests; each request includes eight library
// files that live eight directories deep (src/Vendor/Package/Component/Http/Message/Stream/),
// named by absolute path (__DIR__), as an autoloader would. Run from a copy next to src/:
//
//   php [-d realpath_cache_size=...] app.php REQUESTS
//
// With PHP's realpath cache (the default, 4096K) each path is resolved once per process; with
// realpath_cache_size=0 PHP resolves every include again by lstat-ing each component of it.
$requests = (int)($argv[1] ?? 100);
$dir = __DIR__ . '/src/Vendor/Package/Component/Http/Message/Stream';
$sum = 0;
for ($r = 0; $r < $requests; $r++) {
    for ($i = 0; $i < 8; $i++) {
        $sum += include $dir . "/part$i.php";
    }
}
echo "$requests requests, sum $sum\n";
