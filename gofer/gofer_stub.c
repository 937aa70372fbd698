#include "gofer/gofer.h"
