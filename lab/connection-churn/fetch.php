<?php
// Fetch loop clients for connection-churn through libcurl (php-curl), loopback only, bounded.
//
// usage: php fetch.php MODE N BASE_URL [CAFILE]
//   fresh  BAD: a new easy handle (curl_init) per request: a new connection, a new TLS
//          handshake and a new name lookup each time
//   reuse  GOOD: one easy handle for every request: libcurl keeps the connection alive
//   share  GOOD: a new easy handle per request, but all attached to one share handle that
//          shares connections, TLS sessions and the DNS cache (CURLSHOPT_SHARE with
//          CURL_LOCK_DATA_CONNECT, CURL_LOCK_DATA_SSL_SESSION, CURL_LOCK_DATA_DNS)
[$_, $mode, $n, $base] = $argv;
$cafile = $argv[4] ?? null;
$n = min((int)$n, 200);

function opts($ch, $url, $cafile) {
    curl_setopt($ch, CURLOPT_URL, $url);
    curl_setopt($ch, CURLOPT_RETURNTRANSFER, true);
    curl_setopt($ch, CURLOPT_TIMEOUT, 10);
    if ($cafile !== null) {
        curl_setopt($ch, CURLOPT_CAINFO, $cafile);
    }
}

$total = 0;
if ($mode === 'fresh') {
    for ($i = 0; $i < $n; $i++) {
        $ch = curl_init();
        opts($ch, "$base/feed/$i", $cafile);
        $total += strlen(curl_exec($ch));
        curl_close($ch);
        unset($ch);
    }
} elseif ($mode === 'reuse') {
    $ch = curl_init();
    for ($i = 0; $i < $n; $i++) {
        opts($ch, "$base/feed/$i", $cafile);
        $total += strlen(curl_exec($ch));
    }
    curl_close($ch);
} elseif ($mode === 'share') {
    $sh = curl_share_init();
    curl_share_setopt($sh, CURLSHOPT_SHARE, CURL_LOCK_DATA_CONNECT);
    curl_share_setopt($sh, CURLSHOPT_SHARE, CURL_LOCK_DATA_SSL_SESSION);
    curl_share_setopt($sh, CURLSHOPT_SHARE, CURL_LOCK_DATA_DNS);
    for ($i = 0; $i < $n; $i++) {
        $ch = curl_init();
        curl_setopt($ch, CURLOPT_SHARE, $sh);
        opts($ch, "$base/feed/$i", $cafile);
        $total += strlen(curl_exec($ch));
        curl_close($ch);
        unset($ch);
    }
} else {
    fwrite(STDERR, "fetch.php: unknown mode $mode\n");
    exit(2);
}
echo "$mode: fetched $total bytes\n";
