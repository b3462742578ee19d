<?php
// HTTP/1.1 download with fsockopen, the way many PHP scripts do it.
//
// usage: php client.php PORT MODE
//   feof    BAD: keep-alive request, then `while (!feof($fp)) fread($fp, 4096)`: feof() turns
//           true only when the server closes the connection, i.e. at its keep-alive timeout
//   length  GOOD: read the headers, then exactly Content-Length bytes, then fclose()
//   close   GOOD: the same feof() loop, but the request says "Connection: close", so the
//           server closes as soon as the response is sent
//   wrapper GOOD: file_get_contents('http://...'): PHP's http:// wrapper sends
//           "Connection: close" itself

$port = (int)$argv[1];
$mode = $argv[2];
$host = '127.0.0.1';

if ($mode === 'wrapper') {
    $body = file_get_contents("http://$host:$port/body.bin");
    echo "$mode: " . strlen($body) . " bytes\n";
    exit(0);
}

$fp = fsockopen($host, $port, $errno, $errstr, 5);
if (!$fp) {
    fwrite(STDERR, "connect: $errstr\n");
    exit(1);
}
$conn = $mode === 'close' ? 'close' : 'keep-alive';
fwrite($fp, "GET /body.bin HTTP/1.1\r\nHost: $host\r\nConnection: $conn\r\n\r\n");

$n = 0;
if ($mode === 'feof' || $mode === 'close') {
    while (!feof($fp)) {
        $n += strlen(fread($fp, 4096));
    }
} elseif ($mode === 'length') {
    $length = null;
    while (($line = fgets($fp)) !== false && $line !== "\r\n") {
        if (stripos($line, 'Content-Length:') === 0) {
            $length = (int)trim(substr($line, 15));
        }
    }
    while ($n < $length && !feof($fp)) {
        $n += strlen(fread($fp, min(65536, $length - $n)));
    }
} else {
    fwrite(STDERR, "unknown mode $mode\n");
    exit(2);
}
fclose($fp);
echo "$mode: $n bytes\n";
