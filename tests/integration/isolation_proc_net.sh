#!/bin/bash
# NEGATIVE tests, processes and network: host processes are invisible; the host's
# loopback and abstract unix sockets are unreachable.
. "$(dirname "$0")/lib.sh"

# A host process with a unique argv; it must not be visible in the guest.
sleep "1$((RANDOM % 900 + 100)).$$" &
canary_pid=$!
at_exit "kill -9 $canary_pid"
# its argv once it has exec'd sleep (under load the forked shell is read first)
for ((i = 0; i < 200; i++)); do
	canary_args=$(tr '\0' ' ' </proc/$canary_pid/cmdline | sed 's/ $//')
	case $canary_args in sleep\ 1*) break ;; esac
	sleep 0.05
done
case $canary_args in sleep\ 1*) ;; *) echo "isolation_proc_net: the canary did not start: [$canary_args]" >&2; exit 1 ;; esac
out=$(mrun /bin/sh -c 'ps -e -o pid=,args= 2>/dev/null' 2>&1)
case $out in *"$canary_args"*) fail ps_hides_host "host canary visible: $canary_args" ;; *) ok ps_hides_host ;; esac
n=$(printf '%s\n' "$out" | grep -c .)
if [ "$n" -ge 1 ] && [ "$n" -le 4 ]; then ok ps_shows_only_guest; else fail ps_shows_only_guest "$n processes: $(printf '%s' "$out" | head -c 300)"; fi
# the guest's init (1), sh and the three of the pipeline
out=$(mrun /bin/sh -c 'ls /proc | grep -E "^[0-9]+$" | wc -l; cat /proc/'"$canary_pid"'/cmdline 2>&1 | tr "\0" " "' 2>&1)
case $out in *"$canary_args"*) fail proc_hides_host "read host canary cmdline" ;; *) ok proc_hides_host ;; esac
npids=$(printf '%s\n' "$out" | head -1)
if [ "$npids" -ge 1 ] 2>/dev/null && [ "$npids" -le 5 ]; then ok proc_lists_only_guest; else fail proc_lists_only_guest "$npids pid dirs"; fi
out=$(mrun /bin/sh -c 'kill -0 '"$canary_pid"' 2>&1 && echo SIGNALLED' 2>&1)
case $out in *SIGNALLED*) fail cannot_signal_host "kill -0 host pid succeeded" ;; *) ok cannot_signal_host ;; esac
kill -0 $canary_pid 2>/dev/null && ok_sanity host_canary_alive || fail host_canary_alive "host canary died"

# A TCP listener on the host's loopback.
port_file=$T_TMP/port
"$PY" -c '
import socket, sys, os
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", 0)); s.listen(16)
open(sys.argv[1], "w").write(str(s.getsockname()[1]))
while True:
    c, _ = s.accept(); c.sendall(b"HOST-SECRET-BANNER\n"); c.close()
' "$port_file" &
srv=$!
at_exit "kill -9 $srv"
wait_for 30 test -s "$port_file"
port=$(cat "$port_file")
# Sanity: natively the listener answers (so the guest's failure means something).
native=$("$PY" -c 'import socket,sys; s=socket.create_connection(("127.0.0.1", int(sys.argv[1])), 2); print(s.recv(100).decode().strip())' "$port" 2>&1)
SANITY=1 expect_eq host_listener_up "$native" HOST-SECRET-BANNER
out=$(mrun "$PY" -c '
import socket, sys
for host in ("127.0.0.1", "localhost", "::1"):
    try:
        s = socket.create_connection((host, int(sys.argv[1])), 2)
        print("CONNECTED", s.recv(100).decode().strip())
    except OSError as e:
        print("refused", type(e).__name__)
' "$port" 2>&1)
case $out in *CONNECTED*|*BANNER*) fail tcp_loopback_unreachable "$out" ;; *refused*) ok tcp_loopback_unreachable ;; *) fail tcp_loopback_unreachable "no result: $out" ;; esac
out=$(mrun /bin/bash -c "exec 3<>/dev/tcp/127.0.0.1/$port && head -1 <&3" 2>/dev/null)
case $out in *BANNER*) fail tcp_bash_dev_tcp "$out" ;; *) ok tcp_bash_dev_tcp ;; esac
if command -v curl >/dev/null; then
	out=$(mrun curl --http0.9 -s -m 3 "http://127.0.0.1:$port/" 2>/dev/null)
	case $out in *BANNER*) fail tcp_curl "$out" ;; *) ok tcp_curl ;; esac
fi
out=$(mrun "$PY" -c '
import socket
ifs = [n for _, n in socket.if_nameindex()]
print(" ".join(sorted(ifs)))' 2>&1)
expect_eq only_loopback_interface "$out" lo

# /proc/net is the guest's own network namespace's (netstat, lsof, ss and
# fuser read it): a guest listener shows, owned by the guest's uid, with no
# kernel address; the host's listener above does not; no unix table (a
# bound path's abstract name carries its secret). Before: no /proc/net.
hexport=$(printf '%04X' "$port")
out=$(mrun /bin/sh -c '
"$0" -c "import socket,time; s=socket.socket(); s.bind((\"127.0.0.1\", 8123)); s.listen(); time.sleep(30)" &
for i in $(seq 100); do grep -q ":1FBB 00000000:0000 0A" /proc/net/tcp 2>/dev/null && break; sleep 0.1; done
awk -v u=$(id -u) "NR>1 && \$2==\"0100007F:1FBB\" {print (\$8==u), \$12}" /proc/net/tcp
grep -c ":$1 " /proc/net/tcp /proc/net/tcp6 | cut -d: -f2 | paste -sd+ | bc
if command -v netstat >/dev/null; then netstat -tln 2>/dev/null | grep -c "127.0.0.1:8123 "; else echo 1; fi
[ -e /proc/net/unix ] && echo unix
grep -c "^ *lo:" /proc/net/dev
kill $!' "$PY" "$hexport" 2>&1)
expect_eq proc_net_guest_only "$(echo $out)" "1 0000000000000000 0 1 1"

# A host abstract unix socket.
name="moat-abstract-$T_MARK"
"$PY" -c '
import socket, sys
s = socket.socket(socket.AF_UNIX); s.bind("\0" + sys.argv[1]); s.listen(4)
while True:
    c, _ = s.accept(); c.sendall(b"HOST-ABSTRACT\n"); c.close()
' "$name" &
usrv=$!
at_exit "kill -9 $usrv"
sleep 0.3
native=$("$PY" -c 'import socket,sys; s=socket.socket(socket.AF_UNIX); s.connect("\0"+sys.argv[1]); print(s.recv(100).decode().strip())' "$name" 2>&1)
SANITY=1 expect_eq host_abstract_up "$native" HOST-ABSTRACT
out=$(mrun "$PY" -c '
import socket, sys
try:
    s = socket.socket(socket.AF_UNIX); s.settimeout(2); s.connect("\0" + sys.argv[1]); print("CONNECTED", s.recv(100))
except OSError as e:
    print("refused", type(e).__name__)' "$name" 2>&1)
case $out in *refused*) ok abstract_unix_unreachable ;; *) fail abstract_unix_unreachable "$out" ;; esac

# A host unix socket at a path: not reachable at that path (the guest's /tmp is
# its own), nor through a bind of its directory (only sockets bound inside the
# sandbox have a name in the guest's network namespace).
sdir=$T_TMP/sockdir
mkdir -p "$sdir" && chmod 777 "$sdir"
"$PY" -c '
import socket, sys
s = socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); s.listen(4)
while True:
    c, _ = s.accept(); c.sendall(b"HOST-PATH\n"); c.close()
' "$sdir/host.sock" &
psrv=$!
at_exit "kill -9 $psrv"
wait_for 30 test -S "$sdir/host.sock"
native=$("$PY" -c 'import socket,sys; s=socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); print(s.recv(100).decode().strip())' "$sdir/host.sock" 2>&1)
SANITY=1 expect_eq host_path_socket_up "$native" HOST-PATH
probe='
import socket, sys
try:
    s = socket.socket(socket.AF_UNIX); s.settimeout(2); s.connect(sys.argv[1]); print("CONNECTED", s.recv(100))
except OSError as e:
    print("refused", type(e).__name__)'
out=$(mrun "$PY" -c "$probe" "$sdir/host.sock" 2>&1)
case $out in *refused*FileNotFound*) ok path_unix_unreachable ;; *) fail path_unix_unreachable "$out" ;; esac
out=$(moat run --bind "$sdir:/s:rw" -- "$PY" -c "$probe" /s/host.sock </dev/null 2>&1)
case $out in *refused*) ok path_unix_unreachable_through_bind ;; *) fail path_unix_unreachable_through_bind "$out" ;; esac

# Red team 74: two sandboxes at once share nothing of the kernel's named
# objects. Sandbox A (a guest) holds SysV shm/msg/sem sets at a fixed key,
# a POSIX mqueue, an abstract AF_UNIX name, a unix socket bound at a path of
# a rw bind both sandboxes have, a TCP listener and a UDP socket on
# 127.0.0.1; sandbox B (another guest, with and without --net naming the
# port) finds none of them (IPC, network and pid namespaces of its own; a
# path socket is named in its sandbox's network namespace only) and can bind
# the same UDP port. The key, names and ports are fixed: against fake-moat
# both run natively and B reaches every one.
nb=$T_TMP/nb
mkdir -p "$nb" && chmod 777 "$nb"
cat >"$nb/nb.py" <<'EOF'
import ctypes, os, socket, sys, time
libc = ctypes.CDLL(None, use_errno=True)
rt = ctypes.CDLL("librt.so.1", use_errno=True)
K = 0x74740074
D = sys.argv[2]
if sys.argv[1] == "hold":
    held = [libc.shmget(K, 4096, 0o1666) >= 0, libc.msgget(K, 0o1666) >= 0, libc.semget(K, 1, 0o1666) >= 0,
            rt.mq_open(b"/rt74mq", os.O_CREAT | os.O_RDWR, 0o666, None) >= 0]
    u = socket.socket(socket.AF_UNIX); u.bind(b"\0rt74abs"); u.listen()
    p = socket.socket(socket.AF_UNIX); p.bind(D + "/a.sock"); p.listen()
    t = socket.socket(); t.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); t.bind(("127.0.0.1", 47474)); t.listen()
    d = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); d.bind(("127.0.0.1", 47475))
    open(D + "/held", "w").write("held %s\n" % all(held))
    for _ in range(300):
        if os.path.exists(D + "/done"):
            break
        time.sleep(0.05)
    sys.exit(0)
res = []
def r(name, reached): res.append("%s:%s" % (name, "REACHED" if reached else "no"))
r("shm", libc.shmget(K, 0, 0) >= 0); r("msg", libc.msgget(K, 0) >= 0); r("sem", libc.semget(K, 0, 0) >= 0)
r("mq", rt.mq_open(b"/rt74mq", os.O_RDWR, 0, None) >= 0)
for name, fam, addr in (("abstract", socket.AF_UNIX, b"\0rt74abs"), ("path", socket.AF_UNIX, D + "/a.sock"), ("tcp", socket.AF_INET, ("127.0.0.1", 47474))):
    try:
        s = socket.socket(fam); s.settimeout(1); s.connect(addr); r(name, True)
    except OSError:
        r(name, False)
try:
    d = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); d.bind(("127.0.0.1", 47475)); r("udp_port", False)
except OSError:
    r("udp_port", True)
print(" ".join(res))
EOF
chmod 644 "$nb/nb.py"
moat run --bind "$nb:/nb:rw" -- "$PY" /nb/nb.py hold /nb </dev/null >/dev/null 2>"$T_TMP/nb.err" &
nbpid=$!
at_exit "kill -9 $nbpid 2>/dev/null; touch $nb/done"
# (against fake-moat the objects are the host's: removed at exit)
at_exit 'ipcrm -M 0x74740074 -Q 0x74740074 -S 0x74740074 2>/dev/null; "$PY" -c "import ctypes; ctypes.CDLL(\"librt.so.1\").mq_unlink(b\"/rt74mq\")"' 
wait_for 30 test -s "$nb/held"
got="$(cat "$nb/held" 2>/dev/null)"
got="$got; $(moat run --bind "$nb:/nb:rw" -- "$PY" /nb/nb.py probe /nb </dev/null 2>&1)"
got="$got; $(moat run --net allow=127.0.0.1:47474 --bind "$nb:/nb:rw" -- "$PY" /nb/nb.py probe /nb </dev/null 2>&1)"
touch "$nb/done"
no="shm:no msg:no sem:no mq:no abstract:no path:no tcp:no udp_port:no"
expect_eq neighbour_named_objects_unreachable "$got" "held True; $no; $no"
wait $nbpid 2>/dev/null

finish
