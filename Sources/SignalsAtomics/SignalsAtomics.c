// Everything is in include/SignalsAtomics.h, as static inline functions; this file only gives the
// target a source file.
#include "SignalsAtomics.h"
