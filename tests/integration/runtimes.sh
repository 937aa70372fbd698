#!/bin/bash
# Real language runtimes and tool chains under moat, each compared with the same
# steps run natively: node (and `npm install` of a local tarball, offline),
# javac + java, go build, cargo build (offline, no dependencies), and headless
# Chromium writing a screenshot of a local page (opt-in: MOAT_CHROMIUM=1, or
# tests/integration/runtimes.sh --chromium; it is slow). A runtime that is not
# installed is a visible skip. Every step runs in a fresh copy of the same
# source tree: natively in $T_TMP/native, under moat in $T_TMP/moat bound at
# the same path, so paths in outputs agree.
. "$(dirname "$0")/lib.sh"
[ "${1:-}" = --chromium ] && MOAT_CHROMIUM=1

ENVS=(PATH=/usr/local/bin:/usr/bin:/bin LANG=C HOME=/tmp/rt-home)

# both NAME SCRIPT [EXTRA MOAT ARGS...]: run sh -c SCRIPT in a fresh work dir
# natively and under moat (cwd = the work dir, HOME a scratch dir inside it);
# the case passes when exit status and stdout agree. Outputs in $T_TMP/NAME.{native,moat}.
both() {
	local name=$1 script=$2; shift 2
	local d nrc mrc
	for side in native moat; do
		d=$T_TMP/$name/$side
		rm -rf "$d" && mkdir -p "$d" && cp -a "$T_TMP/src/." "$d/" && chmod -R a+rwX "$d" && chmod 777 "$T_TMP/$name"
	done
	d=$T_TMP/$name/native
	(cd "$d" && env -i "${ENVS[@]}" HOME="$d/.home" /bin/sh -c "$script") </dev/null >"$T_TMP/$name.native" 2>"$T_TMP/$name.native.err"; nrc=$?
	d=$T_TMP/$name/moat
	moat run --bind "$d:$d:rw" --workdir "$d" "$@" --env LANG=C --env HOME="$d/.home" \
		--env PATH=/usr/local/bin:/usr/bin:/bin -- /bin/sh -c "$script" </dev/null >"$T_TMP/$name.moat" 2>"$T_TMP/$name.moat.err"; mrc=$?
	# the two trees have different paths: compare outputs with the path masked
	sed -i "s#$T_TMP/$name/native#WD#g" "$T_TMP/$name.native"
	sed -i "s#$T_TMP/$name/moat#WD#g" "$T_TMP/$name.moat"
	if [ $nrc -ne 0 ]; then
		fail "$name" "fails natively (exit $nrc): $(tail -c 400 "$T_TMP/$name.native.err")"
	elif [ $mrc -ne $nrc ] || ! cmp -s "$T_TMP/$name.native" "$T_TMP/$name.moat"; then
		fail "$name" "exit $mrc (native $nrc); moat [$(head -c 300 "$T_TMP/$name.moat")] native [$(head -c 300 "$T_TMP/$name.native")] stderr [$(tail -c 400 "$T_TMP/$name.moat.err")]"
	else
		SANITY=1 ok "$name"
	fi
}

# --- node and npm ---------------------------------------------------------
if command -v node >/dev/null && command -v npm >/dev/null; then
	rm -rf "$T_TMP/src" && mkdir -p "$T_TMP/src/dep" "$T_TMP/src/app"
	cat >"$T_TMP/src/dep/package.json" <<'EOF'
{ "name": "moat-dep", "version": "1.0.0", "main": "index.js" }
EOF
	echo 'module.exports = (a, b) => a * b;' >"$T_TMP/src/dep/index.js"
	cat >"$T_TMP/src/app/package.json" <<'EOF'
{ "name": "moat-app", "version": "1.0.0", "private": true }
EOF
	cat >"$T_TMP/src/app/main.js" <<'EOF'
const mul = require('moat-dep');
const fs = require('fs'), cp = require('child_process'), crypto = require('crypto');
fs.writeFileSync('out.txt', 'x'.repeat(1000));
const h = crypto.createHash('sha256').update(fs.readFileSync('out.txt')).digest('hex').slice(0, 12);
const child = cp.execFileSync('/bin/echo', ['child']).toString().trim();
console.log(JSON.stringify({ v: mul(6, 7), h, child, files: fs.readdirSync('.').sort() }));
EOF
	# npm pack the dependency to a tarball, install it offline with a local
	# cache, run the program; then the package tree and lock file.
	both node_npm_install '
		export npm_config_cache=$PWD/.npm npm_config_update_notifier=false npm_config_audit=false npm_config_fund=false
		cd dep && npm pack --silent >/dev/null && cd ../app &&
		npm install --offline --no-audit --no-fund --silent ../dep/moat-dep-1.0.0.tgz >/dev/null &&
		node main.js && ls node_modules/moat-dep && grep -c moat-dep package-lock.json'
else skip node_npm_install "node/npm not installed"; fi

# --- java -----------------------------------------------------------------
if command -v javac >/dev/null && command -v java >/dev/null; then
	rm -rf "$T_TMP/src" && mkdir -p "$T_TMP/src"
	cat >"$T_TMP/src/Hello.java" <<'EOF'
import java.nio.file.*; import java.util.*; import java.util.concurrent.*;
public class Hello {
	public static void main(String[] a) throws Exception {
		ExecutorService ex = Executors.newFixedThreadPool(4);
		List<Future<Long>> fs = new ArrayList<>();
		for (int i = 0; i < 8; i++) { final int k = i; fs.add(ex.submit(() -> { long s = 0; for (int j = 0; j < 100000; j++) s += j % (k + 1); return s; })); }
		long t = 0; for (Future<Long> f : fs) t += f.get(); ex.shutdown();
		Path p = Paths.get("out.txt"); Files.writeString(p, "sum " + t + "\n");
		Process pr = new ProcessBuilder("/bin/echo", "child").start(); pr.waitFor();
		System.out.print(Files.readString(p) + new String(pr.getInputStream().readAllBytes()));
	}
}
EOF
	both java_javac 'javac -d classes Hello.java && ls classes && java -Xshare:auto -cp classes Hello'
else skip java_javac "javac/java not installed (default-jdk-headless)"; fi

# --- go -------------------------------------------------------------------
if command -v go >/dev/null; then
	rm -rf "$T_TMP/src" && mkdir -p "$T_TMP/src/hello"
	cat >"$T_TMP/src/hello/main.go" <<'EOF'
package main

import (
	"fmt"
	"os"
	"os/exec"
	"sync"
)

func main() {
	var wg sync.WaitGroup
	sums := make([]int, 8)
	for i := range sums {
		wg.Add(1)
		go func(i int) { defer wg.Done(); for j := 0; j < 100000; j++ { sums[i] += j % (i + 1) } }(i)
	}
	wg.Wait()
	t := 0
	for _, s := range sums { t += s }
	os.WriteFile("out.txt", []byte(fmt.Sprint(t)), 0o644)
	b, _ := os.ReadFile("out.txt")
	c, _ := exec.Command("/bin/echo", "child").Output()
	fmt.Printf("sum %s %s", b, c)
}
EOF
	both go_build 'export GOCACHE=$PWD/.gocache GOPATH=$PWD/.gopath GOPROXY=off GOFLAGS=-mod=mod GOTOOLCHAIN=local
		cd hello && go mod init example.com/hello 2>/dev/null && go vet ./... && go build -o hello . && ./hello'
else skip go_build "go not installed (golang-go)"; fi

# --- cargo ----------------------------------------------------------------
CARGO=$(command -v cargo || { [ -x /root/.cargo/bin/cargo ] && echo /root/.cargo/bin/cargo; } || true)
if [ -n "$CARGO" ]; then
	rm -rf "$T_TMP/src" && mkdir -p "$T_TMP/src/hello/src"
	cat >"$T_TMP/src/hello/Cargo.toml" <<'EOF'
[package]
name = "hello"
version = "0.1.0"
edition = "2021"

[dependencies]
EOF
	cat >"$T_TMP/src/hello/src/main.rs" <<'EOF'
use std::{fs, process::Command, thread};
fn main() {
    let hs: Vec<_> = (0..8u64).map(|i| thread::spawn(move || (0..100000u64).map(|j| j % (i + 1)).sum::<u64>())).collect();
    let t: u64 = hs.into_iter().map(|h| h.join().unwrap()).sum();
    fs::write("out.txt", t.to_string()).unwrap();
    let c = Command::new("/bin/echo").arg("child").output().unwrap();
    print!("sum {} {}", fs::read_to_string("out.txt").unwrap(), String::from_utf8_lossy(&c.stdout));
}
EOF
	cargs=()
	cdir=$(dirname "$(readlink -f "$CARGO")")
	case $CARGO in /root/*|"$HOST_HOME"/*)
		# a rustup install in a home directory: the guest's home is private, bind it in
		cargs=(--bind "$(dirname "$cdir")":"$(dirname "$cdir")":ro)
		[ -d "$HOST_HOME/.rustup" ] && cargs+=(--bind "$HOST_HOME/.rustup:$HOST_HOME/.rustup:ro" --env RUSTUP_HOME="$HOST_HOME/.rustup")
		ENVS+=(RUSTUP_HOME="$HOST_HOME/.rustup") ;;
	esac
	both cargo_build "export CARGO_HOME=\$PWD/.cargo-home CARGO_TARGET_DIR=\$PWD/target; export PATH=$cdir:\$PATH
		cd hello && $CARGO build --offline --release -q && ./target/release/hello || ../target/release/hello" "${cargs[@]}"
else skip cargo_build "cargo not installed"; fi

# --- chromium -------------------------------------------------------------
# Fails today: the browser checks F_GETFL of a /proc/<pid>/status fd it opened
# O_RDONLY and moat's synthesised procfs files are O_RDWR memfds (see
# ARCHITECTURE.md, Known gaps); it dies with SIGTRAP before the screenshot.
CHROMIUM=$(command -v chromium || command -v chromium-browser || true)
if [ -z "${MOAT_CHROMIUM:-}" ]; then
	skip chromium_screenshot "opt-in (slow): MOAT_CHROMIUM=1 or runtimes.sh --chromium"
elif [ -z "$CHROMIUM" ]; then
	skip chromium_screenshot "chromium not installed"
else
	rm -rf "$T_TMP/src" && mkdir -p "$T_TMP/src"
	cat >"$T_TMP/src/page.html" <<'EOF'
<!doctype html><html><body style="margin:0;background:#2060c0"><h1 style="color:#fff;font:48px sans-serif">moat</h1>
<div style="width:200px;height:100px;background:linear-gradient(90deg,#f00,#0f0)"></div></body></html>
EOF
	# PNG written, a real PNG of the asked size; its size in bytes within 2x of native
	both chromium_screenshot "timeout 120 $CHROMIUM --headless --no-sandbox --disable-gpu --no-first-run \
		--user-data-dir=\$PWD/.profile --window-size=400,300 --screenshot=\$PWD/shot.png file://\$PWD/page.html >/dev/null 2>&1
		rc=\$?; [ -s shot.png ] || exit 1
		$PY -c 'import struct,sys; b=open(\"shot.png\",\"rb\").read(); assert b[:8]==b\"\\x89PNG\\r\\n\\x1a\\n\"; print(\"png\", *struct.unpack(\">II\", b[16:24]))'"
	if [ -s "$T_TMP/chromium_screenshot/native/shot.png" ] && [ -s "$T_TMP/chromium_screenshot/moat/shot.png" ]; then
		n=$(stat -c %s "$T_TMP/chromium_screenshot/native/shot.png") m=$(stat -c %s "$T_TMP/chromium_screenshot/moat/shot.png")
		if [ $((m * 2)) -ge "$n" ] && [ $((n * 2)) -ge "$m" ]; then ok_sanity chromium_png_size_class
		else fail chromium_png_size_class "moat $m bytes, native $n"; fi
	fi
fi
finish
