/* placeholder, replaced by the platform implementation */
#include "common/util.h"
