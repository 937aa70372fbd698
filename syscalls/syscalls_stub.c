#include "syscalls/sc.h"
