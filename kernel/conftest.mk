# SPDX-License-Identifier: GPL-2.0 OR MIT
#
# Included by a module's Kbuild after it set conftest-prefix and
# conftest-objs: conftest.h is made from the compile tests in the module's
# conftest/*.c by conftest.sh (next to this file), with this build's
# compiler and the flags of a module object (less the dependency file
# option), before any of conftest-objs is compiled.
conftest-sh := $(dir $(lastword $(MAKEFILE_LIST)))conftest.sh
quiet_cmd_conftest = CONFTEST $@
      cmd_conftest = $(CONFIG_SHELL) $(conftest-sh) $(conftest-prefix) $@ \
		$(src)/conftest $(CC) $(filter-out -Wp$(comma)%,$(c_flags)) -DMODULE

$(obj)/conftest.h: $(conftest-sh) $(wildcard $(src)/conftest/*.c)
	$(call cmd,conftest)

$(addprefix $(obj)/,$(conftest-objs)): $(obj)/conftest.h
ccflags-y += -I$(obj)
clean-files += conftest.h
