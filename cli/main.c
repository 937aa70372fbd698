#include <stdio.h>
int main(int argc, char **argv)
{
	(void)argc; (void)argv;
	fprintf(stderr, "moat: not built yet\n");
	return 2;
}
