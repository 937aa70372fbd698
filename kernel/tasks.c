#include "kernel/task.h"
