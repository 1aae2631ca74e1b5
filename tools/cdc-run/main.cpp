#include "runners.h"

int main(int argc, char** argv) { return cdc::run_tool::RunCli(argc, argv); }
