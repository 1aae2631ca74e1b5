#include "runners.h"

int main(int argc, char** argv) { return cdc::redis_tool::RunCli(argc, argv); }
