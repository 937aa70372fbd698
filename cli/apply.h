/* cli/apply.h - moat apply: git apply, all or nothing */
#ifndef MOAT_CLI_APPLY_H
#define MOAT_CLI_APPLY_H

/* git apply PATCH (an absolute path) in the current directory, the tree,
 * with GIT (an absolute path) and the environment already set; a git apply
 * that fails after it changed the tree has its changes undone. Returns the
 * exit status for moat apply. */
int moat_apply(const char *git, const char *patch);

#endif
