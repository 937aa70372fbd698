/* reopen/reopen_blob.S - the built moat-reopen program, embedded. */
	.section .rodata.moat_reopen, "a", @progbits
	.balign 16
	.globl moat_reopen_start
	.type moat_reopen_start, @object
moat_reopen_start:
	.incbin MOAT_REOPEN_BIN
	.globl moat_reopen_end
	.type moat_reopen_end, @object
moat_reopen_end:
	.size moat_reopen_start, moat_reopen_end - moat_reopen_start
	.size moat_reopen_end, 0

	.section .note.GNU-stack, "", @progbits
