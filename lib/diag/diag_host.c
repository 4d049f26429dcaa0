// SPDX-License-Identifier: MIT
/*
 * The diagnosis's look at the machine: the NVIDIA device files, a GPU on
 * the PCI bus, and whether this is a container granted graphics.
 */
#include <ctype.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "diag_util.h"

/* Is word one of the comma-separated items of list? */
static bool has_item(const char *list, const char *word)
{
	size_t n = strlen(word);
	const char *p = list, *end;

	while (*p) {
		while (*p == ',' || isspace((unsigned char)*p))
			p++;
		end = p + strcspn(p, ",");
		while (end > p && isspace((unsigned char)end[-1]))
			end--;
		if ((size_t)(end - p) == n && !strncmp(p, word, n))
			return true;
		p += strcspn(p, ",");
	}
	return false;
}

/* An NVIDIA display or 3D controller in sysfs, which containers see too. */
static void find_gpu_pci(const struct diag_env *e, struct diag_report *r)
{
	char p[DIAG_PATH * 2], path[DIAG_PATH], vendor[32], class[32];
	struct dirent *d;
	DIR *dir = opendir(diag_at(e, "/sys/bus/pci/devices", p, sizeof(p)));

	if (!dir)
		return;
	while ((d = readdir(dir)) && !r->gpu_pci[0]) {
		if (d->d_name[0] == '.' || strlen(d->d_name) >= 16)
			continue;
		snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/vendor",
			 d->d_name);
		if (diag_first_line(e, path, vendor, sizeof(vendor)) ||
		    strcmp(vendor, "0x10de"))
			continue;
		snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/class",
			 d->d_name);
		if (!diag_first_line(e, path, class, sizeof(class)) &&
		    !strncmp(class, "0x03", 4))
			snprintf(r->gpu_pci, sizeof(r->gpu_pci), "%s",
				 d->d_name);
	}
	closedir(dir);
}

/* The first /dev/nvidiaN (lowest N) into first; how many there are. */
static int gpu_nodes(const struct diag_env *e, char *first, size_t len)
{
	char p[DIAG_PATH * 2];
	struct dirent *d;
	DIR *dir = opendir(diag_at(e, "/dev", p, sizeof(p)));
	long n, lowest = -1;
	int count = 0;
	char *end;

	if (!dir)
		return 0;
	while ((d = readdir(dir))) {
		if (strncmp(d->d_name, "nvidia", 6) ||
		    !isdigit((unsigned char)d->d_name[6]))
			continue;
		n = strtol(d->d_name + 6, &end, 10);
		if (*end)
			continue;
		count++;
		if (lowest < 0 || n < lowest)
			lowest = n;
	}
	closedir(dir);
	if (count)
		snprintf(first, len, "/dev/nvidia%ld", lowest);
	return count;
}

void diag_check_devices(const struct diag_env *e, struct diag_report *r)
{
	char gpu[32] = "/dev/nvidia0", missing[128] = "", denied[128] = "";
	char p[DIAG_PATH * 2];
	const char *nodes[3] = { "/dev/nvidiactl", gpu, "/dev/nvidia-uvm" };
	int i, n = gpu_nodes(e, gpu, sizeof(gpu));

	find_gpu_pci(e, r);
	for (i = 0; i < 3; i++) {
		if (!diag_exists(e, nodes[i]))
			diag_cat(missing, sizeof(missing), "%s%s",
				 missing[0] ? ", " : "", nodes[i]);
		else if (access(diag_at(e, nodes[i], p, sizeof(p)), R_OK | W_OK))
			diag_cat(denied, sizeof(denied), "%s%s",
				 denied[0] ? ", " : "", nodes[i]);
	}
	snprintf(r->dev_missing, sizeof(r->dev_missing), "%s", missing);
	if (missing[0]) {
		if (r->gpu_pci[0])
			diag_set(r, DIAG_DEVICES, DIAG_BAD,
				 "%s missing, though an NVIDIA GPU is on the PCI bus at %s",
				 missing, r->gpu_pci);
		else
			diag_set(r, DIAG_DEVICES, DIAG_BAD,
				 "%s missing, and no NVIDIA GPU is on the PCI bus",
				 missing);
		if (r->kubernetes)
			diag_fix(r, DIAG_DEVICES,
				 "request the GPU in the pod spec (resources.limits: nvidia.com/gpu: 1) on a node with the NVIDIA device plugin");
		else if (r->container[0])
			diag_fix(r, DIAG_DEVICES,
				 "start the container with the GPU: docker run --gpus all (or CDI: --device nvidia.com/gpu=all)");
		else if (r->gpu_pci[0])
			diag_fix(r, DIAG_DEVICES,
				 "load the NVIDIA driver: modprobe nvidia nvidia-uvm (nvidia-modprobe -u -c=0 creates the device files)");
		else
			diag_fix(r, DIAG_DEVICES,
				 "this machine has no NVIDIA GPU: run on one that has");
	} else if (denied[0]) {
		diag_set(r, DIAG_DEVICES, DIAG_BAD,
			 "%s not readable and writable by this user", denied);
		diag_fix(r, DIAG_DEVICES,
			 "join the group that owns them (ls -l /dev/nvidia*), or have the driver create them 0666 (NVreg_DeviceFileMode)");
	} else {
		diag_set(r, DIAG_DEVICES, DIAG_OK,
			 "/dev/nvidiactl, %s%s, /dev/nvidia-uvm present and usable",
			 gpu, n > 1 ? " (and more)" : "");
	}
}

static void note_container(struct diag_report *r, const char *what)
{
	diag_cat(r->container, sizeof(r->container), "%s%s",
		 r->container[0] ? ", " : "", what);
}

void diag_detect_container(const struct diag_env *e, struct diag_report *r)
{
	static const char *const files[] = { "/.dockerenv",
					     "/run/.containerenv" };
	static const char *const runtimes[] = { "kubepods", "docker",
		"containerd", "libpod", "crio", "lxc" };
	char p[DIAG_PATH * 2], line[512], what[96];
	const char *v;
	size_t i;
	FILE *f;

	if (diag_getenv(e, "KUBERNETES_SERVICE_HOST")) {
		r->kubernetes = true;
		note_container(r, "KUBERNETES_SERVICE_HOST");
	}
	if (diag_exists(e, "/run/secrets/kubernetes.io/serviceaccount")) {
		r->kubernetes = true;
		note_container(r, "/run/secrets/kubernetes.io");
	}
	for (i = 0; i < sizeof(files) / sizeof(files[0]); i++)
		if (diag_exists(e, files[i]))
			note_container(r, files[i]);
	v = diag_getenv(e, "container");
	if (v) {
		snprintf(what, sizeof(what), "container=%.40s", v);
		note_container(r, what);
	}
	f = fopen(diag_at(e, "/proc/1/cgroup", p, sizeof(p)), "r");
	while (f && fgets(line, sizeof(line), f)) {
		for (i = 0; i < sizeof(runtimes) / sizeof(runtimes[0]); i++) {
			if (!strstr(line, runtimes[i]))
				continue;
			snprintf(what, sizeof(what), "/proc/1/cgroup: %s",
				 runtimes[i]);
			note_container(r, what);
			r->kubernetes |= i == 0;
			fclose(f);
			f = NULL;
			break;
		}
	}
	if (f)
		fclose(f);

	v = diag_getenv(e, "NVIDIA_DRIVER_CAPABILITIES");
	snprintf(r->caps, sizeof(r->caps), "%s", v ? v : "");
	r->graphics = v && (has_item(v, "graphics") || has_item(v, "all"));
}

void diag_check_container(struct diag_report *r)
{
	char caps[160];

	if (r->caps[0])
		snprintf(caps, sizeof(caps), "NVIDIA_DRIVER_CAPABILITIES=%s",
			 r->caps);
	else
		snprintf(caps, sizeof(caps),
			 "NVIDIA_DRIVER_CAPABILITIES unset: the NVIDIA runtime's default compute,utility");
	if (!r->container[0]) {
		diag_set(r, DIAG_CONTAINER, DIAG_OK,
			 "not in a container (no /.dockerenv, /run/.containerenv, container= or KUBERNETES_SERVICE_HOST; /proc/1/cgroup names no runtime)");
	} else if (r->graphics) {
		diag_set(r, DIAG_CONTAINER, DIAG_OK,
			 "a container (%s) with the graphics capability (%s)",
			 r->container, caps);
	} else if (r->f[DIAG_ICD_LIB].state == DIAG_OK) {
		diag_set(r, DIAG_CONTAINER, DIAG_OK,
			 "a container (%s) without the graphics capability (%s), yet the NVIDIA Vulkan driver loads (the image or a CDI spec provides it)",
			 r->container, caps);
	} else {
		diag_set(r, DIAG_CONTAINER, DIAG_BAD,
			 "a container (%s) without the graphics capability (%s): the NVIDIA container runtime mounts the Vulkan driver (nvidia_icd.json, libGLX_nvidia.so.0) only with graphics",
			 r->container, caps);
		diag_grant_graphics(r, r->f[DIAG_CONTAINER].fix,
				    sizeof(r->f[DIAG_CONTAINER].fix));
	}
}

