#include "CSystemdBus.h"

#include <dlfcn.h>
#include <stdio.h>

struct nb_sd_bus_functions nb_sd_bus_loaded;

/* POSIX's way to store dlsym's object pointer in a function pointer. */
#define NB_SD_BUS_RESOLVE(name)                                           \
    do {                                                                  \
        *(void **)(&found.name) = dlsym(library, #name);                  \
        if (found.name == NULL) {                                         \
            snprintf(missing, missing_size, "%s", #name);                 \
            dlclose(library);                                             \
            return NB_SD_BUS_FUNCTION_MISSING;                            \
        }                                                                 \
    } while (0)

int nb_sd_bus_load(const char *soname, int install, char *missing, size_t missing_size) {
    /* RTLD_LOCAL: its symbols serve only these pointers, never other lookups in the process. */
    void *library = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
    if (library == NULL) {
        return NB_SD_BUS_LIBRARY_MISSING;
    }
    struct nb_sd_bus_functions found;
#define NB_SD_BUS_RESOLVE_ONE(ret, name, params, args) NB_SD_BUS_RESOLVE(name);
    NB_SD_BUS_FUNCTIONS(NB_SD_BUS_RESOLVE_ONE)
#undef NB_SD_BUS_RESOLVE_ONE
    NB_SD_BUS_RESOLVE(sd_bus_close);
    if (install) {
        nb_sd_bus_loaded = found;
    } else {
        dlclose(library);
    }
    return NB_SD_BUS_LOADED;
}
