#!/bin/bash
# isolation_tty_tmux: `moat run -t -- bash`, driven like a person would, in a
# detached tmux session of a fixed size (a server of its own, killed at exit):
# type commands and read the screen, ^C a sleep, ^Z a job and fg it, resize
# the window (SIGWINCH reaches the guest: `stty size` follows), exit with a
# status. The guest's terminal is a pty of its own devpts (the pane's host pty
# is not in its /dev/pts): that case is an isolation case; the others are
# sanity cases (a shell on a terminal behaves as a shell on a terminal), as
# are vim, less, top and the Python REPL through -t's terminal-controls
# filter; what the filter stops (OSC 52, titles, modes left on) is isolation.
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

# full-screen programs through -t's terminal-controls filter (the default
# --tty-controls=screen): they draw, take keys in their modes (application
# cursor keys, the alternate screen) and leave the shell's screen as it was
tm set-option -g set-clipboard on >/dev/null 2>&1
type_line 'clear; echo BEFORE-FULLSCREEN'
if command -v vim >/dev/null; then
	screen_has '^BEFORE-FULLSCREEN$' 5
	type_line 'vim -u NONE -N -i NONE /tmp/v; echo VIM=$?'
	if screen_has '^~ *$'; then
		tm send-keys -t t:0 -l 'ihello vim'
		sleep 0.3
		tm send-keys -t t:0 Escape
		sleep 0.5 # a key sequence's timeout (ESC alone, not ESC :)
		tm send-keys -t t:0 -l ':wq'
		tm send-keys -t t:0 Enter
		# (what is typed before vim's end is read by vim: it waits for
		# the answers to its queries, dropped by the filter, and
		# discards the input meanwhile)
		screen_has '^VIM=0$' 5
		type_line 'echo V=$(cat /tmp/v); rm -f /tmp/v'
	fi
	if screen_has '^V=hello vim$' && screen_has BEFORE-FULLSCREEN 1; then SANITY=1 ok vim_edits; else fail vim_edits "$(screen)"; fi
fi
# full_screen NAME CMD PATTERN [KEY PATTERN2]: run CMD, wait for PATTERN
# (then type KEY and wait for PATTERN2), quit it with q: ok when it ended 0
full_screen() {
	type_line "$2; echo $1=\$?"
	if screen_has "$3" && { [ -z "${4:-}" ] || { tm send-keys -t t:0 -l "$4"; screen_has "$5" 5; }; }; then
		tm send-keys -t t:0 -l q
	fi
	if screen_has "^$1=0\$"; then SANITY=1 ok "$1"; else fail "$1" "$(screen)"; fi
}
if command -v less >/dev/null; then
	full_screen less_pages 'seq 1000 | less' '^22$' G '^1000$'
	# the shell's screen as it was (the alternate screen left)
	if screen_has BEFORE-FULLSCREEN 1; then SANITY=1 ok less_alt_screen; else fail less_alt_screen "$(screen)"; fi
fi
command -v top >/dev/null && full_screen top_runs 'top -d 1' 'PID +USER'
# Python's REPL: readline's line editing and history (the Up key)
type_line "clear; $PY -q; echo PY=\$?"
if screen_has '^>>>'; then
	type_line 'print(6 * 7)'
	screen_has '^42$' 5
	tm send-keys -t t:0 Up
	sleep 0.3
	tm send-keys -t t:0 Enter
	for _ in $(seq 50); do [ "$(tm capture-pane -p -t t:0 | grep -c '^42$')" = 2 ] && break; sleep 0.1; done
	type_line 'exit()'
fi
if screen_has '^PY=0$' && [ "$(tm capture-pane -p -t t:0 | grep -c '^42$')" = 2 ]; then SANITY=1 ok python_repl; else fail python_repl "$(screen)"; fi

# what reaches beyond the screen does not: OSC 52 (tmux, set-clipboard on,
# takes it into a paste buffer, as an emulator into the clipboard), a title
# (OSC 2: the pane's title), and the mouse reporting a guest left on is
# turned off at the end (here: at the guest's exit, as after --timeout)
tm delete-buffer >/dev/null 2>&1
type_line "printf '\\033]52;c;%s\\007\\033]2;guest-title\\007\\033[?1000h\\033[?2004hOSC-SENT\\n' \$(printf guest-clip | base64)"
screen_has '^OSC-SENT$' 5
sleep 0.3
clip=$(tm show-buffer 2>/dev/null)
title=$(tm display-message -p -t t:0 '#{pane_title}')
case $clip:$title in *guest-clip* | *guest-title*) fail osc52_title_not_passed "buffer [$clip] title [$title]" ;;
*) ok osc52_title_not_passed ;;
esac

# exit: moat ends with bash's status (a job still stopped would make bash
# refuse the first exit: none is left, the cat was killed)
type_line 'jobs; exit 7'
if screen_has '^MOAT-EXIT=7$'; then SANITY=1 ok exit_status; else fail exit_status "$(screen)"; fi
# the mouse reporting the guest turned on (above) is off once moat ended
mouse=$(tm display-message -p -t t:0 '#{mouse_standard_flag}#{mouse_any_flag}#{mouse_button_flag}')
expect_eq mouse_mode_off_after_exit "$mouse" "000"

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
