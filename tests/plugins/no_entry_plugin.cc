// A test library that loads but is no plugin: it exports no `sluice_plugin`, so loading it must
// fail with PLUGIN_SYMBOL_NOT_FOUND.
extern "C" __attribute__((visibility("default"))) int not_a_sluice_plugin() { return 42; }
