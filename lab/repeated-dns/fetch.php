<?php
// Fetch loop clients for repeated-dns through libcurl (php-curl), loopback only, bounded.
//
// usage: php fetch.php MODE N BASE_URL
//   fresh      BAD: a new easy handle (curl_init) per request: each has an empty DNS cache, so
//              libcurl's resolver (getaddrinfo in a resolver thread) looks the host up again
//   reuse      GOOD: one easy handle: its DNS cache (CURLOPT_DNS_CACHE_TIMEOUT, 60 s) and its
//              connection are reused
//   share-dns  GOOD for DNS: a new easy handle per request, all attached to one share handle
//              sharing the DNS cache (CURLSHOPT_SHARE with CURL_LOCK_DATA_DNS): one lookup,
//              though still a new connection per request
[$_, $mode, $n, $base] = $argv;
$n = min((int)$n, 200);

function fetch($ch, $url) {
    curl_setopt($ch, CURLOPT_URL, $url);
    curl_setopt($ch, CURLOPT_RETURNTRANSFER, true);
    curl_setopt($ch, CURLOPT_TIMEOUT, 10);
    return strlen(curl_exec($ch));
}

$total = 0;
if ($mode === 'fresh') {
    for ($i = 0; $i < $n; $i++) {
        $ch = curl_init();
        $total += fetch($ch, "$base/feed/$i");
        unset($ch);
    }
} elseif ($mode === 'reuse') {
    $ch = curl_init();
    for ($i = 0; $i < $n; $i++) {
        $total += fetch($ch, "$base/feed/$i");
    }
} elseif ($mode === 'share-dns') {
    $sh = curl_share_init();
    curl_share_setopt($sh, CURLSHOPT_SHARE, CURL_LOCK_DATA_DNS);
    for ($i = 0; $i < $n; $i++) {
        $ch = curl_init();
        curl_setopt($ch, CURLOPT_SHARE, $sh);
        $total += fetch($ch, "$base/feed/$i");
        unset($ch);
    }
} else {
    fwrite(STDERR, "fetch.php: unknown mode $mode\n");
    exit(2);
}
echo "$mode: fetched $total bytes\n";
