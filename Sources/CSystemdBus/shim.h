#ifndef NOTIFBRIDGE_CSYSTEMDBUS_SHIM_H
#define NOTIFBRIDGE_CSYSTEMDBUS_SHIM_H

#include <systemd/sd-bus.h>

/* The bus thread is woken through an eventfd, which Swift's Glibc module does not export. */
#include <sys/eventfd.h>

#endif
