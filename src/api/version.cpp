// Anchor for the api library until the server and C API land.
#include "api/version.h"
