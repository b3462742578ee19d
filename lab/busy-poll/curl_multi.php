<?php
// busy-poll lab: PHP's curl_multi API (libcurl) fetching one URL from a slow server.
//
// usage: php curl_multi.php MODE URL
//   spin    BAD   the loop calls curl_multi_exec() again and again and never waits: every
//                 call returns at once while the answer is pending (an empty zero-timeout poll
//                 and three rt_sigaction(SIGPIPE) calls per turn)
//   select  GOOD  curl_multi_select() blocks until the socket is ready (or 1 s passes);
//                 when it returns -1 (select failed) the loop sleeps with usleep() instead of
//                 spinning
if ($argc < 3) {
    fwrite(STDERR, "usage: php curl_multi.php spin|select URL\n");
    exit(2);
}
[$_, $mode, $url] = $argv;
$mh = curl_multi_init();
$ch = curl_init($url);
curl_setopt($ch, CURLOPT_RETURNTRANSFER, true);
curl_setopt($ch, CURLOPT_TIMEOUT, 10);
curl_multi_add_handle($mh, $ch);
$turns = 0;
$deadline = microtime(true) + 10;
do {
    $status = curl_multi_exec($mh, $active);
    $turns++;
    if ($mode === 'select' && $active) {
        if (curl_multi_select($mh, 1.0) === -1) {
            usleep(1000);
        }
    }
} while ($active && $status === CURLM_OK && microtime(true) < $deadline);
$body = curl_multi_getcontent($ch);
curl_multi_remove_handle($mh, $ch);
curl_multi_close($mh);
fwrite(STDERR, "$mode: $turns turns of curl_multi_exec, " . strlen($body) . " bytes\n");
