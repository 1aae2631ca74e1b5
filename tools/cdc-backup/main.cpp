#include "runners.h"

int main(int argc, char** argv) { return cdc::backup_tool::RunCli(argc, argv); }
