<?php
// Read SRC (a path or an http:// URL) to the end and count the bytes.
//
// usage: php read.php SRC MODE
//   small  BAD: `while (!feof($fp)) fread($fp, 4096)`: PHP's stream layer reads its 8 KiB
//          chunk per read(2)/recvfrom(2), so a 200 MiB file takes 25,600 calls
//   big    GOOD: stream_set_chunk_size($fp, 1 << 20) and fread($fp, 1 << 20): 1 MiB per call

$src = $argv[1];
$mode = $argv[2];
$fp = fopen($src, 'rb');
if (!$fp) {
    fwrite(STDERR, "cannot open $src\n");
    exit(1);
}
$size = 4096;
if ($mode === 'big') {
    stream_set_chunk_size($fp, 1 << 20);
    $size = 1 << 20;
} elseif ($mode !== 'small') {
    fwrite(STDERR, "unknown mode $mode\n");
    exit(2);
}
$n = 0;
while (!feof($fp)) {
    $n += strlen(fread($fp, $size));
}
fclose($fp);
echo "$mode: $n bytes\n";
