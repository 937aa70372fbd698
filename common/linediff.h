/* common/linediff.h - the unified hunks of a line diff between two texts,
 * framed as `git diff` frames them, for --export's patches.
 *
 * Lines end with '\n' (a '\r' before it is part of the line; the last line
 * may have no '\n' at all). The edit script is Myers' O(ND) difference
 * algorithm in its linear-space form (middle snake, divide and conquer), on
 * line numbers (equal lines share a number, found through a hash table), so
 * it is a shortest script; a run of added or removed lines that could sit
 * in several places among equal lines is slid where git diff puts it
 * (git's compaction and default indent heuristic). The hunks are git's:
 * three lines of context,
 * two changes merged into one hunk when at most six common lines lie between
 * them (their contexts touch or overlap), a header
 * "@@ -start[,count] +start[,count] @@ funcname" (",1" left out, start 0 for
 * an empty side, funcname by git's default rule: the nearest line before the
 * hunk in the old text that starts with a letter, '_' or '$', at most 80
 * bytes, trailing blanks cut), "-" lines of a change before its "+" lines,
 * and "\ No newline at end of file" after a last line without one.
 *
 * Bounded, whatever the texts (an export's files are the guest's): memory is
 * O(lines); time is the hashing plus at most LINEDIFF_MAX_WORK steps of the
 * search (a step: one diagonal visited or one pair of lines compared), which
 * is about D*D/4 + snake lengths for D edited lines, so a D past ~23,000
 * (less with long matching runs) runs out. Past it, or past
 * LINEDIFF_MAX_LINES lines between the common prefix and suffix, the diff
 * falls back to one hunk that removes the whole changed middle and adds it
 * back: still a correct patch, only larger. */
#ifndef MOAT_COMMON_LINEDIFF_H
#define MOAT_COMMON_LINEDIFF_H

#include <stddef.h>
#include <stdio.h>

#define LINEDIFF_CONTEXT 3
#define LINEDIFF_MAX_WORK (1ULL << 27)
#define LINEDIFF_MAX_LINES (1UL << 22)

struct linediff_stats {
	unsigned long long work;  /* search steps taken */
	size_t hunks;             /* hunks written */
	size_t removed, added;    /* "-" and "+" lines written */
	int fell_back;            /* 1: the whole-middle hunk (a bound was hit) */
};

/* Write the hunks that turn a (an bytes) into b (bn bytes) to f: nothing
 * when the texts are equal. max_work: LINEDIFF_MAX_WORK, or smaller (tests).
 * st may be NULL. 0, or -1 when f reports a write error. */
int linediff_write(FILE *f, const char *a, size_t an, const char *b, size_t bn,
		   unsigned long long max_work, struct linediff_stats *st);

#endif
