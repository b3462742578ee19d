<?php
// PHP part of the syslint benchmark workload (run under strace by workload.sh).
// File work plus loopback-only socket work. Usage: php workload.php PORT WORKDIR
$port = (int)($argv[1] ?? 18473);
$work = $argv[2] ?? sys_get_temp_dir();
$deadline = microtime(true) + 20;

// --- files
$dir = "$work/php";
@mkdir($dir, 0755, true);
for ($i = 0; $i < 40 && microtime(true) < $deadline; $i++) {
    $p = "$dir/f$i.tmp";
    file_put_contents($p, str_repeat(chr(65 + $i % 26), 1000 + $i * 137));
    $fh = fopen($p, 'a+');
    flock($fh, LOCK_EX);
    fwrite($fh, "line $i\n");
    fseek($fh, 0);
    fread($fh, 512);
    flock($fh, LOCK_UN);
    fclose($fh);
    clearstatcache();
    stat($p);
    if ($i % 3 == 0) { rename($p, "$p.old"); }
}
$list = scandir($dir);
foreach (glob("$dir/*") as $f) { unlink($f); }
rmdir($dir);
@file_get_contents('/nonexistent/php/file');
foreach (array_slice(scandir('/etc'), 0, 40) as $e) { @is_readable("/etc/$e"); }

// --- HTTP against local nginx via stream wrapper
$ctx = stream_context_create(['http' => ['timeout' => 5, 'ignore_errors' => true]]);
for ($i = 0; $i < 15 && microtime(true) < $deadline; $i++) {
    $path = ['/', '/docs/page' . ($i % 40 + 1) . '.html', '/blob.bin', '/missing/a'][$i % 4];
    @file_get_contents("http://127.0.0.1:$port$path", false, $ctx);
}

// --- raw loopback TCP: server + non-blocking client with stream_select
$srv = stream_socket_server('tcp://127.0.0.1:0', $errno, $errstr);
if ($srv) {
    $name = stream_socket_get_name($srv, false);
    for ($i = 0; $i < 10; $i++) {
        $cli = stream_socket_client("tcp://$name", $errno, $errstr, 2);
        $conn = stream_socket_accept($srv, 2);
        fwrite($cli, str_repeat('p', 256 + $i));
        $r = [$conn]; $w = null; $x = null;
        if (stream_select($r, $w, $x, 1) > 0) {
            $data = fread($conn, 4096);
            fwrite($conn, strtoupper($data));
        }
        fread($cli, 4096);
        fclose($cli);
        fclose($conn);
    }
    fclose($srv);
}
// raw HTTP over a socket to nginx
$s = @stream_socket_client("tcp://127.0.0.1:$port", $errno, $errstr, 2);
if ($s) {
    fwrite($s, "GET /docs/ HTTP/1.0\r\nHost: localhost\r\n\r\n");
    while (!feof($s)) { fread($s, 8192); }
    fclose($s);
}
echo count($list), "\n";
