/* SPDX-License-Identifier: MIT */
/* The subcommands; each takes argv with argv[0] = its name. */
#ifndef GDRMAP_TOOLS_COMMANDS_H
#define GDRMAP_TOOLS_COMMANDS_H

int cmd_doctor(int argc, char **argv);
int cmd_copylat(int argc, char **argv);
int cmd_copybw(int argc, char **argv);
int cmd_apiperf(int argc, char **argv);
int cmd_pplat(int argc, char **argv);

#endif /* GDRMAP_TOOLS_COMMANDS_H */
