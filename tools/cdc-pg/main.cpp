#include "runners.h"

int main(int argc, char** argv) { return cdc::pg_tool::RunCli(argc, argv); }
