#include "runners.h"

int main(int argc, char** argv) { return cdc::nats_tool::RunCli(argc, argv); }
