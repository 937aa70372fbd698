#include "common/util.h"
