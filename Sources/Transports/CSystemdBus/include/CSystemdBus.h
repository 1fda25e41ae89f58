#ifndef NOTIFBRIDGE_CSYSTEMDBUS_H
#define NOTIFBRIDGE_CSYSTEMDBUS_H

/*
 * The part of sd-bus (libsystemd) that NotifBridgeDBus uses, declared here so that building
 * needs no libsystemd-dev: the types and prototypes below match systemd 252's <systemd/sd-bus.h>.
 * Nothing links libsystemd. nb_sd_bus_load() opens libsystemd.so.0 (Debian's libsystemd0) with
 * dlopen and fills a table of function pointers; the sd_bus_* functions below call through it, so
 * the Swift code reads as plain sd-bus. Only D-Bus (Bluetooth) needs the library, and a machine
 * without it gets an error from nb_sd_bus_load() instead of an executable that will not start.
 *
 * Call nb_sd_bus_load() successfully before any sd_bus_* function: until then the table is empty.
 */

#include <stddef.h>
#include <stdint.h>

/* The bus thread is woken through an eventfd, which Swift's Glibc module does not export. */
#include <sys/eventfd.h>

typedef struct sd_bus sd_bus;
typedef struct sd_bus_message sd_bus_message;
typedef struct sd_bus_slot sd_bus_slot;

typedef struct {
    const char *name;
    const char *message;
    int _need_free;
} sd_bus_error;

typedef int (*sd_bus_message_handler_t)(sd_bus_message *m, void *userdata, sd_bus_error *ret_error);
typedef void (*sd_bus_destroy_t)(void *userdata);

/*
 * X(return type, name, (parameters), (arguments)) for every function used, in sd-bus.h's words.
 * `grep -rhoE 'sd_bus_[a-z_]*' Sources` lists the uses; sd_bus_close, the one returning void, follows.
 */
#define NB_SD_BUS_FUNCTIONS(X) \
    X(int, sd_bus_open_system, (sd_bus **ret), (ret)) \
    X(int, sd_bus_open_user, (sd_bus **ret), (ret)) \
    X(int, sd_bus_new, (sd_bus **ret), (ret)) \
    X(int, sd_bus_set_address, (sd_bus *bus, const char *address), (bus, address)) \
    X(int, sd_bus_set_bus_client, (sd_bus *bus, int b), (bus, b)) \
    X(int, sd_bus_set_fd, (sd_bus *bus, int input_fd, int output_fd), (bus, input_fd, output_fd)) \
    X(int, sd_bus_start, (sd_bus *bus), (bus)) \
    X(sd_bus *, sd_bus_flush_close_unref, (sd_bus *bus), (bus)) \
    X(sd_bus *, sd_bus_unref, (sd_bus *bus), (bus)) \
    X(int, sd_bus_is_open, (sd_bus *bus), (bus)) \
    X(int, sd_bus_is_ready, (sd_bus *bus), (bus)) \
    X(int, sd_bus_get_unique_name, (sd_bus *bus, const char **unique), (bus, unique)) \
    X(int, sd_bus_get_fd, (sd_bus *bus), (bus)) \
    X(int, sd_bus_get_events, (sd_bus *bus), (bus)) \
    X(int, sd_bus_get_timeout, (sd_bus *bus, uint64_t *timeout_usec), (bus, timeout_usec)) \
    X(int, sd_bus_process, (sd_bus *bus, sd_bus_message **r), (bus, r)) \
    X(int, sd_bus_send, (sd_bus *bus, sd_bus_message *m, uint64_t *cookie), (bus, m, cookie)) \
    X(int, sd_bus_call_async, \
        (sd_bus *bus, sd_bus_slot **slot, sd_bus_message *m, sd_bus_message_handler_t callback, void *userdata, uint64_t usec), \
        (bus, slot, m, callback, userdata, usec)) \
    X(int, sd_bus_add_object, \
        (sd_bus *bus, sd_bus_slot **slot, const char *path, sd_bus_message_handler_t callback, void *userdata), \
        (bus, slot, path, callback, userdata)) \
    X(int, sd_bus_add_fallback, \
        (sd_bus *bus, sd_bus_slot **slot, const char *prefix, sd_bus_message_handler_t callback, void *userdata), \
        (bus, slot, prefix, callback, userdata)) \
    X(int, sd_bus_add_match_async, \
        (sd_bus *bus, sd_bus_slot **slot, const char *match, sd_bus_message_handler_t callback, \
            sd_bus_message_handler_t install_callback, void *userdata), \
        (bus, slot, match, callback, install_callback, userdata)) \
    X(int, sd_bus_slot_set_destroy_callback, (sd_bus_slot *s, sd_bus_destroy_t callback), (s, callback)) \
    X(int, sd_bus_slot_set_floating, (sd_bus_slot *slot, int b), (slot, b)) \
    X(sd_bus_slot *, sd_bus_slot_unref, (sd_bus_slot *slot), (slot)) \
    X(int, sd_bus_message_new_method_call, \
        (sd_bus *bus, sd_bus_message **m, const char *destination, const char *path, const char *interface, const char *member), \
        (bus, m, destination, path, interface, member)) \
    X(int, sd_bus_message_new_signal, \
        (sd_bus *bus, sd_bus_message **m, const char *path, const char *interface, const char *member), \
        (bus, m, path, interface, member)) \
    X(int, sd_bus_message_set_destination, (sd_bus_message *m, const char *destination), (m, destination)) \
    X(int, sd_bus_message_new_method_return, (sd_bus_message *call, sd_bus_message **m), (call, m)) \
    X(int, sd_bus_message_new_method_error, (sd_bus_message *call, sd_bus_message **m, const sd_bus_error *e), (call, m, e)) \
    X(sd_bus_message *, sd_bus_message_ref, (sd_bus_message *m), (m)) \
    X(sd_bus_message *, sd_bus_message_unref, (sd_bus_message *m), (m)) \
    X(int, sd_bus_message_append_basic, (sd_bus_message *m, char type, const void *p), (m, type, p)) \
    X(int, sd_bus_message_append_array, (sd_bus_message *m, char type, const void *ptr, size_t size), (m, type, ptr, size)) \
    X(int, sd_bus_message_open_container, (sd_bus_message *m, char type, const char *contents), (m, type, contents)) \
    X(int, sd_bus_message_close_container, (sd_bus_message *m), (m)) \
    X(int, sd_bus_message_enter_container, (sd_bus_message *m, char type, const char *contents), (m, type, contents)) \
    X(int, sd_bus_message_exit_container, (sd_bus_message *m), (m)) \
    X(int, sd_bus_message_peek_type, (sd_bus_message *m, char *type, const char **contents), (m, type, contents)) \
    X(int, sd_bus_message_read_basic, (sd_bus_message *m, char type, void *p), (m, type, p)) \
    X(int, sd_bus_message_read_array, (sd_bus_message *m, char type, const void **ptr, size_t *size), (m, type, ptr, size)) \
    X(int, sd_bus_message_rewind, (sd_bus_message *m, int complete), (m, complete)) \
    X(int, sd_bus_message_seal, (sd_bus_message *m, uint64_t cookie, uint64_t timeout_usec), (m, cookie, timeout_usec)) \
    X(const sd_bus_error *, sd_bus_message_get_error, (sd_bus_message *m), (m)) \
    X(int, sd_bus_message_get_expect_reply, (sd_bus_message *m), (m)) \
    X(const char *, sd_bus_message_get_path, (sd_bus_message *m), (m)) \
    X(const char *, sd_bus_message_get_interface, (sd_bus_message *m), (m)) \
    X(const char *, sd_bus_message_get_member, (sd_bus_message *m), (m)) \
    X(const char *, sd_bus_message_get_sender, (sd_bus_message *m), (m)) \
    X(const char *, sd_bus_message_get_signature, (sd_bus_message *m, int complete), (m, complete)) \
    X(int, sd_bus_message_is_method_call, (sd_bus_message *m, const char *interface, const char *member), (m, interface, member)) \
    X(int, sd_bus_message_is_signal, (sd_bus_message *m, const char *interface, const char *member), (m, interface, member))

/* One pointer per function, named as the function. */
struct nb_sd_bus_functions {
#define NB_SD_BUS_POINTER(ret, name, params, args) ret (*name) params;
    NB_SD_BUS_FUNCTIONS(NB_SD_BUS_POINTER)
#undef NB_SD_BUS_POINTER
    void (*sd_bus_close)(sd_bus *bus);
};

/* Filled by a successful nb_sd_bus_load(..., install = 1); never changed afterwards. */
extern struct nb_sd_bus_functions nb_sd_bus_loaded;

#define NB_SD_BUS_WRAPPER(ret, name, params, args) \
    static inline ret name params { return nb_sd_bus_loaded.name args; }
NB_SD_BUS_FUNCTIONS(NB_SD_BUS_WRAPPER)
#undef NB_SD_BUS_WRAPPER

static inline void sd_bus_close(sd_bus *bus) { nb_sd_bus_loaded.sd_bus_close(bus); }

#define NB_SD_BUS_LOADED 0
/* dlopen failed: the library is not installed (or not loadable). */
#define NB_SD_BUS_LIBRARY_MISSING 1
/* The library lacks a function; its name is in `missing`. */
#define NB_SD_BUS_FUNCTION_MISSING 2

/*
 * Opens `soname` and looks up every function above. With `install` nonzero, a complete set
 * becomes the one the sd_bus_* wrappers call (and the library stays open); call it so only
 * once, before any of them. With `install` zero it only checks, and closes the library again.
 */
int nb_sd_bus_load(const char *soname, int install, char *missing, size_t missing_size);

#endif
