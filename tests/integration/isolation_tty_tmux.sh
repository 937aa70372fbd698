#!/bin/bash
# isolation_tty_tmux: `moat run -t -- bash`, driven like a person would, in a
# detached tmux session of a fixed size (a server of its own, killed at exit):
# type commands and read the screen, ^C a sleep, ^Z a job and fg it, resize
# the window (SIGWINCH reaches the guest: `stty size` follows), exit with a
# status. The guest's terminal is a pty of its own devpts (the pane's host pty
# is not in its /dev/pts): that case is an isolation case; the others are
# sanity cases (a shell on a terminal behaves as a shell on a terminal).
. "$(dirname "$0")/lib.sh"

command -v tmux >/dev/null || { skip tmux "no tmux"; finish; }
# a server of its own (its socket in the test's directory, removed with it)
sock=$T_TMP/tmux.sock
tm() { tmux -S "$sock" -f /dev/null "$@"; }
at_exit "tmux -S $sock kill-server"
# Hold a host pty of our own first: on a machine with no other terminal the
# pane would get the host's pts/0 alone, and a moat that isolates nothing
# would show the same "/dev/pts/0, listing 0 and ptmx" as the guest's devpts.
"$PY" -c 'import os, time; os.openpty(); time.sleep(600)' </dev/null >/dev/null 2>&1 &
ptyholder=$!
at_exit "kill $ptyholder"
for _ in $(seq 50); do ls -l /proc/$ptyholder/fd 2>/dev/null | grep -q ptmx && break; sleep 0.1; done

# screen_has PATTERN [SECONDS]: wait until the pane shows PATTERN (grep -E)
screen_has() {
	local i
	for i in $(seq $((${2:-10} * 10))); do
		tm capture-pane -p -t t:0 2>/dev/null | grep -Eq -- "$1" && return 0
		sleep 0.1
	done
	return 1
}
screen() { tm capture-pane -p -t t:0 2>/dev/null | grep -v '^$' | tail -6 | tr '\n' '|'; }
# type TEXT: send TEXT and Enter
type_line() { tm send-keys -t t:0 -l "$1"; tm send-keys -t t:0 Enter; }

tm new-session -d -s t -x 80 -y 24 \
	"$MOAT run -t --env PS1='moat\$ ' -- /bin/bash --norc --noprofile -i; echo MOAT-EXIT=\$?; sleep 60"
tm set-option -t t remain-on-exit on >/dev/null 2>&1
tm set-option -t t window-size manual >/dev/null 2>&1

if ! screen_has '^moat\$' 20; then
	fail started "no prompt: $(screen)"
	finish
fi
SANITY=1 ok started

# the guest's terminal: /dev/pts/0 of its own instance; the pane's host pty
# (whatever its number) is not listed
hostpty=$(tm display-message -p -t t:0 '#{pane_tty}')
type_line 'echo T=$(tty) L=$(ls /dev/pts | tr "\n" ,)'
if screen_has '^T=/dev/pts/0 L=0,ptmx,$'; then
	ok own_terminal
else
	fail own_terminal "host pane $hostpty; screen: $(screen)"
fi

type_line 'echo SIZE=$(stty size)'
if screen_has '^SIZE=24 80$'; then SANITY=1 ok window_size; else fail window_size "$(screen)"; fi

# resize: the relay passes SIGWINCH on as TIOCSWINSZ; bash and stty see it
tm resize-window -t t:0 -x 100 -y 30
sleep 0.5
type_line 'echo SIZE2=$(stty size)'
if screen_has '^SIZE2=30 100$'; then SANITY=1 ok resize_sigwinch; else fail resize_sigwinch "$(screen)"; fi

# ^C a sleep: SIGINT to the foreground process group only; bash stays
type_line 'sleep 100'
sleep 0.7
tm send-keys -t t:0 C-c
type_line 'echo INT=$?'
if screen_has '^INT=130$'; then SANITY=1 ok ctrl_c_sleep; else fail ctrl_c_sleep "$(screen)"; fi

# ^Z a job, list it, fg it, let it finish
type_line 'sleep 2; echo SLEPT'
sleep 0.5
tm send-keys -t t:0 C-z
if screen_has 'Stopped'; then SANITY=1 ok ctrl_z_stops; else fail ctrl_z_stops "$(screen)"; fi
type_line 'jobs'
if screen_has '^\[1\]\+ +Stopped +sleep 2'; then SANITY=1 ok jobs_lists_stopped; else fail jobs_lists_stopped "$(screen)"; fi
type_line 'fg'
if screen_has '^SLEPT$' 10; then SANITY=1 ok fg_resumes; else fail fg_resumes "$(screen)"; fi

# a background job and the terminal: reading from it stops the job (SIGTTIN)
type_line 'cat & sleep 1; jobs; kill -KILL %1; wait'
if screen_has 'Stopped.*cat'; then SANITY=1 ok background_read_sigttin; else fail background_read_sigttin "$(screen)"; fi

# exit: moat ends with bash's status (a job still stopped would make bash
# refuse the first exit: none is left, the cat was killed)
type_line 'jobs; exit 7'
if screen_has '^MOAT-EXIT=7$'; then SANITY=1 ok exit_status; else fail exit_status "$(screen)"; fi

# moat's own last line after a guest whose output ends inside an OSC string
# (it swallows every later byte up to a BEL or ST): before red-team round
# 64 the pane showed "guest done" only, never "some changes were refused",
# nor the caller's next line
mkdir -p "$T_TMP/osc"
tm new-session -d -s r -x 120 -y 10 \
	"$MOAT run --bind $T_TMP/osc:/w:cow --export $T_TMP/oscexp -- /bin/sh -c 'ln -s /etc/passwd /w/abs; printf \"guest done\\033]0;\"'; echo AFTER=\$?; sleep 60"
got=
for _ in $(seq 100); do
	got=$(tm capture-pane -p -t r:0 2>/dev/null | grep -v '^$' | tr '\n' '|')
	case $got in *AFTER=*) break ;; esac
	sleep 0.1
done
case $got in *"some changes were refused"*AFTER=0*) ok moat_line_after_open_osc ;;
*) fail moat_line_after_open_osc "$got" ;;
esac

finish
