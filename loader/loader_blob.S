/* loader/loader_blob.S - the built moat-loader, embedded (loader_blob.h). */
	.section .rodata.moat_loader, "a", @progbits
	.balign 16
	.globl moat_loader_start
	.type moat_loader_start, @object
moat_loader_start:
	.incbin MOAT_LOADER_BIN
	.globl moat_loader_end
	.type moat_loader_end, @object
moat_loader_end:
	.size moat_loader_start, moat_loader_end - moat_loader_start
	.size moat_loader_end, 0

	.section .note.GNU-stack, "", @progbits
